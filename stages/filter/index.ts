import { loadDiff, loadPullRequestSummary } from '../../cache/pull-requests.js';
import { hashOf } from '../../pipeline/hash.js';
import { ItemError } from '../../pipeline/errors.js';
import { defineStage, type WorkItem } from '../../pipeline/stage.js';
import { collectOutputSchema, type CollectOutput } from '../collect/pull-request.js';
import { readableDiff } from '../collect/readable-diff.js';
import { decideFilter } from './decide.js';
import type { FilterOutput } from './output.js';

export interface FilterInput {
  readonly collect: CollectOutput;
  /** Hash of the filter configuration: a change of the rules decides every item again. */
  readonly rules: string;
}

/**
 * filter: rules only, no outside system. Reads collect's done items, decides each pull request
 * with `decideFilter` (pure), and hands the candidates with their message cues and diff size on
 * to classify.
 */
export const filterStage = defineStage<FilterInput, FilterOutput>({
  name: 'filter',
  // 2: the name of the branch the pull request came from is read for performance cues
  version: 2,
  description: 'rules: merged into the default branch, asv config at the base commit, core files touched, size limits, message patterns',
  system: 'local',

  async plan(ctx, scope) {
    const rows = ctx.ledger.list('collect', { window: scope.window, includeTimeless: false, repos: scope.repos, statuses: ['done'] });
    const items: WorkItem<FilterInput>[] = [];
    const rules = hashOf(ctx.config.filter);
    for (const row of rows) {
      const parsed = collectOutputSchema.safeParse(row.output);
      if (!parsed.success) {
        ctx.log.warn({ stage: 'filter', item: row.key, issue: parsed.error.issues[0]?.message }, 'collect output unreadable; item skipped');
        continue;
      }
      const collect = parsed.data;
      if (scope.prs.length > 0 && !scope.prs.includes(collect.number)) continue;
      items.push({ key: row.key, repo: collect.repo, at: collect.mergedAt, input: { collect, rules } });
    }
    return items;
  },

  async run(ctx, item) {
    const { repo, number, contentHash } = item.input.collect;
    const stored = loadPullRequestSummary(ctx.db, repo, number);
    if (!stored) throw new ItemError('pull-request-missing', `${item.key}: collect marked it done but its record is not in the store`, { fix: 'run `perfmine stage collect --force` for it' });
    // The diff is read only if its size alone cannot settle the token budget; it is measured as
    // the LLM is shown it (binary patches as one line), and its stored size bounds that.
    const diff = { bytes: stored.diffBytes, text: () => readableDiff(loadDiff(ctx.db, repo, number) ?? '') };
    const decision = decideFilter({ ...stored.record, diff }, contentHash, ctx.config.filter);
    // No log line per item: the ledger keeps the verdict, its reason and the cues (`perfmine status
    // --stage filter --items`), and a logger per item cost about 4% of the stage over 30,000 items.
    return decision.status === 'done'
      ? { status: 'done', output: decision.output, detail: decision.detail }
      : { status: 'dropped', reason: decision.reason ?? 'unspecified', detail: decision.detail, output: decision.output };
  },
});
