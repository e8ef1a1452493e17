/**
 * What a task cost to make (issue 30, item 4): machine minutes (builds, measurement, replays) and
 * LLM dollars, per emitted task and per month. Pure: the store's figures in (pipeline/report/costs.ts
 * reads them), the month's figures out. `perfmine status --month`, the report and the dataset card
 * all show what this computes.
 *
 * The cost model:
 * - Machine minutes are the wall time of the container work the store records, at the configured
 *   container limits (`docker.cpus`, ...): not CPU time, and not the time an item waited.
 *   - builds: every synthesize attempt of the candidate's base commit, verified or not, each rerun
 *     included (`build_attempts.duration_ms`: the build and its verification). The image tiers
 *     that many commits share (toolchain, repository clone, source tier) are not counted.
 *   - measurement: validate's work on the candidate (its wall time: the expert image's build, the
 *     measurement, the tests and the snapshot), as recorded by its latest validation (a validation
 *     replaced by `--force` is not counted again). A validation recorded before validate kept its
 *     time falls back on the measurement alone (the harness's `measuredMs`, the asv invocations'
 *     times), else counts 0 and is named (`unrecorded`). Scoring agents' patches is using a task,
 *     not making it: not counted.
 *   - replays: each replay of the task (issue 30 item 1), through `replayMachineMs`; 0 without any.
 * - LLM dollars are what the requests sent cost (tokens times `llm.prices`, from the call log):
 *   classify's prompts for the pull request, and the build agent's for its base commit. An answer
 *   served from perfmine's LLM cache sends no request and costs 0.
 * - A base commit's builds and agent dollars are shared equally by the candidates built on it (the
 *   pull requests classify passed with that base commit, in any month): each carries 1/n of them.
 *   A commit no candidate claims any more (classify changed its mind) counts in whole to the month
 *   of its synthesize item.
 * - A month's total is the sum over every pull request of the month that cost anything (dropped
 *   ones included) and the unclaimed commits of the month. Per emitted task: that total divided by
 *   the tasks emitted, the honest figure; direct: what the emitted tasks cost themselves (their
 *   own LLM calls, their share of their commit's builds, their validation and replays), on average.
 */

/** One pull request the store holds work for. */
export interface CandidateCostInput {
  /** `owner/name#N`. */
  readonly key: string;
  /** `YYYY-MM` of its merge. */
  readonly month: string;
  /** Its base commit (`owner/name@sha`) when classify passed it (synthesize builds for it), else null. */
  readonly commit: string | null;
  /** The emitted task's instance id, or null when it was not emitted. */
  readonly instanceId: string | null;
  /** The cost of the LLM requests it sent (classify's prompts). */
  readonly llmUsd: number;
  /**
   * validate's machine time for it (ms): the expert build, measurement, tests and snapshot; 0 when
   * it was not validated; null when it was but its time was not recorded (validated before perfmine
   * recorded it: counted as 0 and named in `MonthCosts.unrecorded`).
   */
  readonly measureMs: number | null;
  /** Its replays' machine time (ms), one entry a replay; empty until replays are recorded. */
  readonly replayMs: readonly number[];
}

/** One base commit synthesize built (or tried to). */
export interface CommitCostInput {
  /** `owner/name@sha`. */
  readonly key: string;
  /** The month of its synthesize item (its earliest candidate's merge), or null when unknown. */
  readonly month: string | null;
  readonly attempts: number;
  /** Every attempt's build and verification (ms). */
  readonly buildMs: number;
  /** The build agent's requests for it. */
  readonly llmUsd: number;
}

export interface CostFigures {
  readonly buildMinutes: number;
  readonly measureMinutes: number;
  readonly replayMinutes: number;
  /** builds + measurement + replays. */
  readonly machineMinutes: number;
  readonly llmUsd: number;
}

export interface TaskCost extends CostFigures {
  readonly key: string;
  readonly instanceId: string;
  /** How many candidates share its base commit's builds (it carries 1/this of them). */
  readonly sharedBy: number;
  readonly replays: number;
}

export interface MonthCosts {
  readonly month: string;
  readonly emitted: number;
  /** Pull requests of the month with recorded work (dropped ones included). */
  readonly candidates: number;
  /** Base commits whose builds count (in whole or in part) in the month. */
  readonly commits: number;
  /** Candidates of the month validated without a recorded machine time (their measurement counts 0). */
  readonly unrecorded: number;
  /** Every item of the month. */
  readonly total: CostFigures;
  /** total / emitted; null when nothing was emitted. */
  readonly perEmittedTask: CostFigures | null;
  /** The mean of the emitted tasks' own costs; null when nothing was emitted. */
  readonly directPerTask: CostFigures | null;
  /** Each emitted task's own cost, by instance id. */
  readonly tasks: readonly TaskCost[];
}

/** What the figures mean, in one paragraph (status, the report and the card say the same). */
export const COST_MODEL_NOTE =
  'Machine minutes are the wall time of the container work perfmine records, at its container limits: builds (every build attempt of ' +
  "the task's base commit, failed ones included, shared equally by the candidates built on that commit), measurement (validate's " +
  'expert build, measurement, tests and snapshot) and replays. LLM dollars are the requests sent, priced by `llm.prices`; an answer ' +
  "served from perfmine's LLM cache costs $0. The month's total includes the work on candidates that were dropped; per emitted task " +
  "is that total divided by the tasks emitted; direct is a task's own share.";

/** What to say when some validations of the month have no recorded machine time; null when all do. */
export function unrecordedNote(c: MonthCosts): string | null {
  if (c.unrecorded === 0) return null;
  return `${c.unrecorded} candidate${c.unrecorded === 1 ? ' was' : 's were'} validated before perfmine recorded validate's machine time: their measurement counts 0 here (\`perfmine stage validate --force\` measures them again and records it)`;
}

/** The machine time of a task's replays (issue 30 item 1): their sum; 0 when it has none. */
export function replayMachineMs(durationsMs: readonly number[]): number {
  return durationsMs.reduce((a, ms) => a + ms, 0);
}

interface Sum {
  buildMs: number;
  measureMs: number;
  replayMs: number;
  llmUsd: number;
}

const zero = (): Sum => ({ buildMs: 0, measureMs: 0, replayMs: 0, llmUsd: 0 });

function figures(s: Sum, divisor = 1): CostFigures {
  const min = (ms: number) => ms / 60_000 / divisor;
  return {
    buildMinutes: min(s.buildMs),
    measureMinutes: min(s.measureMs),
    replayMinutes: min(s.replayMs),
    machineMinutes: min(s.buildMs + s.measureMs + s.replayMs),
    llmUsd: s.llmUsd / divisor,
  };
}

function add(into: Sum, s: Sum): void {
  into.buildMs += s.buildMs;
  into.measureMs += s.measureMs;
  into.replayMs += s.replayMs;
  into.llmUsd += s.llmUsd;
}

/**
 * The month's costs. `candidates` and `commits` are the whole store's (every month), so that a
 * commit shared by candidates of two months is split between them.
 */
export function monthCosts(month: string, candidates: readonly CandidateCostInput[], commits: readonly CommitCostInput[]): MonthCosts {
  const claimants = new Map<string, number>();
  for (const c of candidates) if (c.commit !== null) claimants.set(c.commit, (claimants.get(c.commit) ?? 0) + 1);
  const commitByKey = new Map(commits.map((c) => [c.key, c]));

  const total = zero();
  const direct = zero();
  const counted = new Set<string>();
  const tasks: TaskCost[] = [];
  let monthCandidates = 0;
  let unrecorded = 0;
  for (const c of candidates) {
    if (c.month !== month) continue;
    if (c.measureMs === null) unrecorded += 1;
    const commit = c.commit === null ? undefined : commitByKey.get(c.commit);
    const sharedBy = c.commit === null ? 1 : claimants.get(c.commit)!;
    const own: Sum = {
      buildMs: commit ? commit.buildMs / sharedBy : 0,
      measureMs: c.measureMs ?? 0,
      replayMs: replayMachineMs(c.replayMs),
      llmUsd: c.llmUsd + (commit ? commit.llmUsd / sharedBy : 0),
    };
    if (commit) counted.add(commit.key);
    if (own.buildMs + own.measureMs + own.replayMs + own.llmUsd > 0 || c.instanceId !== null || c.measureMs === null) monthCandidates += 1;
    add(total, own);
    if (c.instanceId !== null) {
      add(direct, own);
      tasks.push({ key: c.key, instanceId: c.instanceId, sharedBy, replays: c.replayMs.length, ...figures(own) });
    }
  }
  // commits that no candidate claims: in whole to their own month
  for (const commit of commits) {
    if (commit.month !== month || claimants.has(commit.key)) continue;
    counted.add(commit.key);
    add(total, { buildMs: commit.buildMs, measureMs: 0, replayMs: 0, llmUsd: commit.llmUsd });
  }
  tasks.sort((a, b) => (a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0));
  const emitted = tasks.length;
  return {
    month,
    emitted,
    candidates: monthCandidates,
    commits: counted.size,
    unrecorded,
    total: figures(total),
    perEmittedTask: emitted === 0 ? null : figures(total, emitted),
    directPerTask: emitted === 0 ? null : figures(direct, emitted),
    tasks,
  };
}

/** `12.35 min` (two decimals below 10 minutes, one above). */
export function formatMinutes(minutes: number): string {
  return `${minutes.toFixed(minutes < 10 ? 2 : 1)} min`;
}

/** `$0.0123` below a dollar, `$12.35` above; `$0` for nothing. */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}
