import { z } from 'zod';
import { loadDiff, loadPullRequestSummaries, loadPullRequestSummary, summaryOf } from '../../cache/pull-requests.js';
import type { Db } from '../../cache/store.js';
import { ItemError } from '../../pipeline/errors.js';
import { hashOf } from '../../pipeline/hash.js';
import { defineStage, type BatchResult, type Outcome, type WorkItem } from '../../pipeline/stage.js';
import type { PullRequest } from '../../pipeline/concepts/records/pull-request.js';
import { readableDiff } from '../../pipeline/concepts/readable-diff.js';
import type { FilterConfig } from './config.js';
import { decideFilter } from './decide.js';
import type { FilterOutput } from '../../pipeline/concepts/records/filter-output.js';
import { filterResultSettings } from './result-settings.js';

export interface FilterInput {
  readonly repo: string;
  readonly number: number;
  /** The hash of the collected record: a new record is decided again. */
  readonly contentHash: string;
  /** Hash of the filter's rules (result-settings.ts): a change of the rules decides every item again. */
  readonly rules: string;
}

/** What filter reads of a collect output to plan (the instant comes from the ledger row). */
const plannedFields = z.object({ repo: z.string(), number: z.number().int().positive(), contentHash: z.string() });

/**
 * filter: rules only, no outside system. Reads collect's done items, decides each pull request
 * with `decideFilter` (pure), and hands the candidates with their message cues and diff size on
 * to classify. The runner gives it its items in batches (`runBatch`): their records are read in
 * ordered range scans, not a lookup each.
 */
export const filterStage = defineStage<FilterInput, FilterOutput>({
  name: 'filter',
  // 2: the name of the branch the pull request came from is read for performance cues; an
  // item's input is the record's hash and the rules', not collect's whole output. 3: asv benchmarks
  // changed beside core files are a cue; technique cues (short-circuit, early exit, precompute,
  // avoid re-..., lazily); a body from a commit message is read for a few cues only. 4: a cache
  // cleared or invalidated is not a cue; avoiding building, computing ... a structure is
  version: 4,
  description: 'rules: merged into the default branch, asv config at the base commit, core files touched, size limits, message patterns',
  system: 'local',

  async plan(ctx, scope) {
    // Only the fields the items need are read from collect's outputs (by SQLite), not each output whole.
    const rows = ctx.ledger.outputFields(
      'collect',
      { window: scope.window, includeTimeless: false, repos: scope.repos, statuses: ['done'] },
      ['number', 'contentHash'],
    );
    const items: WorkItem<FilterInput>[] = [];
    const rules = hashOf(filterResultSettings(ctx.config));
    for (const row of rows) {
      const parsed = plannedFields.safeParse({ repo: row.repo, number: row.fields[0], contentHash: row.fields[1] });
      if (!parsed.success) {
        ctx.log.warn({ stage: 'filter', item: row.key, issue: parsed.error.issues[0]?.message }, 'collect output unreadable; item skipped');
        continue;
      }
      const { repo, number, contentHash } = parsed.data;
      if (scope.prs.length > 0 && !scope.prs.includes(number)) continue;
      items.push({ key: row.key, repo, at: row.at, input: { repo, number, contentHash, rules } });
    }
    return items;
  },

  async run(ctx, item) {
    const { repo, number } = item.input;
    const stored = loadPullRequestSummary(ctx.db, repo, number);
    if (!stored) throw missingRecord(item.key);
    return decideItem(ctx.db, ctx.config.filter, item, stored);
  },

  async runBatch(ctx, items) {
    const byRepo = new Map<string, WorkItem<FilterInput>[]>();
    for (const item of items) {
      const list = byRepo.get(item.input.repo);
      if (list) list.push(item);
      else byRepo.set(item.input.repo, [item]);
    }
    const results: BatchResult<FilterInput, FilterOutput>[] = [];
    for (const [repo, list] of byRepo) {
      const stored = loadPullRequestSummaries(
        ctx.db,
        repo,
        list.map((i) => i.input.number),
      );
      for (const item of list) {
        const found = stored.get(item.input.number);
        if (!found) results.push({ item, error: missingRecord(item.key) });
        else results.push({ item, outcome: decideItem(ctx.db, ctx.config.filter, item, summaryOf(found)) });
      }
    }
    return results;
  },
});

function missingRecord(key: string): ItemError {
  return new ItemError('pull-request-missing', `${key}: collect marked it done but its record is not in the store`, {
    fix: 'run `perfmine stage collect --force` for it',
  });
}

/** One item's outcome from its stored record (without the diff, known by its size). */
function decideItem(
  db: Db,
  config: FilterConfig,
  item: WorkItem<FilterInput>,
  stored: { record: Omit<PullRequest, 'diff'>; diffBytes: number },
): Outcome<FilterOutput> {
  const { repo, number, contentHash } = item.input;
  // The diff is read only if its size alone cannot settle the token budget; it is measured as
  // the LLM is shown it (binary patches as one line), and its stored size bounds that.
  const diff = { bytes: stored.diffBytes, text: () => readableDiff(loadDiff(db, repo, number) ?? '') };
  const decision = decideFilter({ ...stored.record, diff }, contentHash, config);
  // No log line per item: the ledger keeps the verdict, its reason and the cues (`perfmine status
  // --stage filter --items`), and a logger per item cost about 4% of the stage over 30,000 items.
  return decision.status === 'done'
    ? { status: 'done', output: decision.output, detail: decision.detail }
    : { status: 'dropped', reason: decision.reason ?? 'unspecified', detail: decision.detail, output: decision.output };
}
