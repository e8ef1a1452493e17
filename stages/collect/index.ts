import { savePullRequest, serializePullRequest, type SerializedPullRequest } from '../../cache/pull-requests.js';
import { missingCredential } from '../../pipeline/credentials.js';
import { defineStage, type BatchResult, type Outcome, type PipelineContext, type WorkItem } from '../../pipeline/stage.js';
import { collectFromGit, planGit } from './git-source.js';
import { collectFromGitHub, planGitHub, runProblem, type Collected } from './github-source.js';
import type { CollectInput } from './input.js';
import type { CollectOutput, PullRequest } from '../../pipeline/concepts/records/pull-request.js';

// 2: records keep the branch the pull request came from (`headRef`), which the message rules
// read; the content hash is the SHA-256 of the stored JSON and the diff. 3: the git source reads
// a squash or merge commit's body as the pull request's (`bodySource`)
const VERSION = 3;

/** What `persist` stores of a collected pull request: the record and its serialized form. */
interface CollectRows {
  readonly record: PullRequest;
  readonly serialized: SerializedPullRequest;
}

/**
 * collect: every pull request merged into a repository's default branch in the window, with
 * what later stages need (texts, dates, SHAs, files, diff, comments, linked issues, asv config),
 * from the GitHub API or from a local clone (`--source git:PATH`).
 */
export const collectStage = defineStage<CollectInput, CollectOutput, CollectRows>({
  name: 'collect',
  version: VERSION,
  description: 'merged pull requests of the window, from GitHub or a local clone',
  system: 'github',

  preflight(ctx, scope) {
    if (scope.source.kind === 'github' && ctx.credentials.githubTokens.length === 0) {
      throw missingCredential(
        'GITHUB_TOKEN',
        'collect from the GitHub API',
        'collect --source git:PATH reads pull requests from a local clone without any API; set GITHUB_TOKEN (or GITHUB_TOKENS=a,b,c) for the API',
      );
    }
  },

  plan(ctx, scope) {
    return scope.source.kind === 'git' ? planGit(ctx, scope) : planGitHub(ctx, scope);
  },

  async run(ctx, item) {
    const input = item.input;
    let collected: Collected;
    if (input.source === 'problem') collected = runProblem(input);
    else if (input.source === 'git') collected = { record: await collectFromGit(ctx, input) };
    else collected = await collectFromGitHub(ctx, input);
    return outcomeOf(collected);
  },

  // From a clone, items are read by one git process in plan order: taken in order, in chunks
  // committed one transaction each, they cost no scheduling per item.
  batched: (scope) => scope.source.kind === 'git',

  async runBatch(ctx, items) {
    const results: BatchResult<CollectInput, CollectOutput, CollectRows>[] = [];
    for (const item of items) {
      try {
        results.push({ item, outcome: outcomeOf(await collectOne(ctx, item)) });
      } catch (error) {
        results.push({ item, error });
      }
    }
    return results;
  },

  persist(db, _item, outcome) {
    if (outcome.rows && outcome.status === 'done') savePullRequest(db, outcome.rows.record, outcome.rows.serialized);
  },
});

/** One item outside the GitHub source's concurrency: a clone's pull request, or a recorded problem. */
async function collectOne(ctx: PipelineContext, item: WorkItem<CollectInput>): Promise<Collected> {
  const input = item.input;
  if (input.source === 'problem') return runProblem(input);
  if (input.source === 'git') return { record: await collectFromGit(ctx, input) };
  throw new RangeError(`collect: ${item.key} comes from GitHub; its items run one by one`);
}

function outcomeOf(collected: Collected): Outcome<CollectOutput, CollectRows> {
  if ('dropped' in collected) return { status: 'dropped', reason: collected.dropped, detail: collected.detail };
  const record = collected.record;
  const serialized = serializePullRequest(record);
  return {
    status: 'done',
    output: {
      repo: record.repo,
      number: record.number,
      mergedAt: record.mergedAt,
      baseSha: record.baseSha,
      mergeSha: record.mergeSha,
      contentHash: serialized.contentHash,
    },
    ...(record.missing.length > 0 ? { detail: `missing: ${record.missing.join(', ')}` } : {}),
    rows: { record, serialized },
  };
}
