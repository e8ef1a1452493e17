import type { ReplayVerdict, ReplayWorkload, WorkloadOutcome } from '../../pipeline/concepts/records/replay-record.js';
import { medianStandardError } from '../../stages/validate/paired/noise.js';
import { studentTUpperQuantile } from '../../stages/validate/paired/student-t.js';

/**
 * The replication rule: whether a replay reproduces what validate recorded. Pure.
 *
 * Only the workloads validate found improved are judged (workloads.json, perfmine_verdict.change
 * `improved`); for each, with speedups as base time / expert time and 95% intervals
 * exp(−(δ ± t₀.₉₇₅,df · se)) around the median pair log ratio δ:
 *
 * - **replicates** when the replay calls it improved by perfmine's own keep verdict (same
 *   direction, significant beyond the replay's own noise after Holm over the replay's workloads,
 *   beyond the 1.05 floor, at least 75% of the pairs faster) **and** the two speedups agree: the
 *   recorded and the replayed intervals overlap once each is widened, in log space, by
 *   `magnitudeTolerance` (10%) of its own log speedup. The widening is the machine's share: the
 *   same code can be a few percent more or less faster on another CPU, which only matters where
 *   both intervals are narrow (a 1,000x speedup measured to ±1% on each machine); a 2x speedup
 *   gets ±7%, a 1.3x ±2.7%.
 * - **does not replicate** when the replay calls it worsened, cannot compare it because a side
 *   failed or the benchmark changed, does not have it in the suite, calls it improved by a
 *   speedup that disagrees with the recorded one, or calls it unchanged although it could see
 *   the recorded speedup: its minimum detectable speedup is at most the recorded interval's low
 *   end.
 * - **inconclusive** when the replay calls it unchanged but could not have seen it (its minimum
 *   detectable speedup is above the recorded interval's low end: a noisy machine, too few
 *   rounds), or has too few pairs.
 *
 * A replay **replicates** when every judged workload replicates; it **does not replicate** when
 * any judged workload does not; otherwise it is **inconclusive**. Its replicated share is the
 * judged workloads that replicate over all judged.
 *
 * The recorded interval: validate's rule computes se = √(f(n)·s̃²/n) from the moderated noise s̃
 * (workloads.json `noise`) and the usable pairs n (`usable_pairs`) (paired/noise.ts
 * medianStandardError), with the moderated degrees of freedom, which also count the workload's
 * base/base pairs and the prior's weight; workloads.json does not hold those, so the recorded
 * interval uses df = n − 1, the fewest the rule can have had: it is at least as wide as
 * validate's own. The replay's interval uses its own rule's se and df exactly.
 */

export interface RuleSettings {
  /** Confidence level of both intervals. */
  readonly level: number;
  /** Each interval is widened in log space by this fraction of its own log speedup before they are compared. */
  readonly magnitudeTolerance: number;
}

export const REPLICATION_RULE: RuleSettings = { level: 0.95, magnitudeTolerance: 0.1 };

/** A speedup (base / expert) and its interval. */
export interface SpeedupEstimate {
  readonly speedup: number;
  readonly interval: readonly [number, number];
}

/** The speedup exp(−δ) and its interval exp(−(δ ± t·se)), δ the median log(expert/base). */
export function speedupEstimate(medianLog: number, standardError: number, df: number, level: number): SpeedupEstimate {
  const t = standardError === 0 ? 0 : studentTUpperQuantile((1 - level) / 2, Math.max(1, df));
  return {
    speedup: Math.exp(-medianLog),
    interval: [Math.exp(-(medianLog + t * standardError)), Math.exp(-(medianLog - t * standardError))],
  };
}

/** A workload as workloads.json records it (perfmine_verdict). */
export interface RecordedWorkload {
  readonly name: string;
  readonly change: string;
  /** expert / base, the median of the normalized pair ratios. */
  readonly normalizedMedian: number | null;
  /** The moderated noise of one pair's log ratio. */
  readonly noise: number | null;
  readonly usablePairs: number;
  readonly mds: number | null;
}

/** The recorded speedup and its interval (null when the record lacks the numbers). */
export function recordedEstimate(w: RecordedWorkload, level: number): SpeedupEstimate | null {
  if (w.normalizedMedian === null || !(w.normalizedMedian > 0)) return null;
  if (w.noise === null || w.usablePairs < 2) return null;
  const se = medianStandardError(w.noise ** 2, w.usablePairs);
  return speedupEstimate(Math.log(w.normalizedMedian), se, w.usablePairs - 1, level);
}

/** A workload as the replay measured it: its verdict and its rule's numbers. */
export interface ReplayedWorkload {
  readonly change: 'improved' | 'worsened' | 'unchanged' | 'incomparable';
  readonly reason: string | null;
  /** What the verifier says of its reason, where it says more (why its hack checks judged the workload memoised, with their numbers). */
  readonly detail?: string | null;
  readonly medianLog: number | null;
  readonly standardError: number | null;
  readonly df: number;
  readonly mds: number | null;
  readonly pValue: number | null;
  readonly usablePairs: number;
  readonly fasterPairs: number;
}

export function replayedEstimate(w: ReplayedWorkload, level: number): SpeedupEstimate | null {
  if (w.medianLog === null) return null;
  if (w.standardError === null) return { speedup: Math.exp(-w.medianLog), interval: [Math.exp(-w.medianLog), Math.exp(-w.medianLog)] };
  return speedupEstimate(w.medianLog, w.standardError, w.df, level);
}

/** The interval widened in log space by `tolerance` × |log speedup| on each side. */
export function widened(e: SpeedupEstimate, tolerance: number): [number, number] {
  const margin = tolerance * Math.abs(Math.log(e.speedup));
  return [Math.exp(Math.log(e.interval[0]) - margin), Math.exp(Math.log(e.interval[1]) + margin)];
}

/** Whether the two speedups agree: their widened intervals overlap. */
export function speedupsAgree(recorded: SpeedupEstimate, replay: SpeedupEstimate, tolerance: number): boolean {
  const [a0, a1] = widened(recorded, tolerance);
  const [b0, b1] = widened(replay, tolerance);
  return a0 <= b1 && b0 <= a1;
}

const x = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(3));
export function estimateText(e: SpeedupEstimate | null): string {
  return e === null ? 'n/a' : `${x(e.speedup)}x [${x(e.interval[0])}, ${x(e.interval[1])}]`;
}

export interface WorkloadJudgement {
  readonly outcome: WorkloadOutcome;
  readonly why: string;
}

/** The rule for one workload validate found improved; `replay` null: the replayed suite has no such workload. */
export function judgeWorkload(
  recorded: RecordedWorkload,
  replay: ReplayedWorkload | null,
  settings: RuleSettings = REPLICATION_RULE,
): WorkloadJudgement {
  const rec = recordedEstimate(recorded, settings.level);
  const was = `recorded ${estimateText(rec)}`;
  if (replay === null) return { outcome: 'does-not-replicate', why: `not in the replayed suite (${was})` };
  const now = replayedEstimate(replay, settings.level);
  const measured = `${replay.fasterPairs}/${replay.usablePairs} pairs faster`;
  switch (replay.change) {
    case 'worsened':
      return { outcome: 'does-not-replicate', why: `the replay calls it worsened: ${estimateText(now)}, ${measured} (${was})` };
    case 'incomparable':
      return replay.reason === 'too-few-pairs'
        ? { outcome: 'inconclusive', why: `the replay has too few pairs (${replay.usablePairs}) to judge it (${was})` }
        : { outcome: 'does-not-replicate', why: `the replay cannot compare it: ${replay.reason ?? 'incomparable'} (${was})` };
    case 'unchanged': {
      const low = rec?.interval[0] ?? null;
      const because = `${replay.reason ?? 'not significant'}${replay.detail ? `: ${replay.detail}` : ''}`;
      if (replay.mds === null || low === null || replay.mds > low)
        return {
          outcome: 'inconclusive',
          why: `the replay calls it unchanged (${because}): ${estimateText(now)}, but it could only see speedups of ${replay.mds === null ? 'n/a' : x(replay.mds)}x and more (${was})`,
        };
      return {
        outcome: 'does-not-replicate',
        why: `the replay calls it unchanged (${because}): ${estimateText(now)}, ${measured}, though it could see speedups from ${x(replay.mds)}x (${was})`,
      };
    }
    case 'improved': {
      if (rec === null || now === null)
        return { outcome: 'replicates', why: `improved: ${estimateText(now)} (${was}; no interval to compare, the direction alone)` };
      if (speedupsAgree(rec, now, settings.magnitudeTolerance))
        return { outcome: 'replicates', why: `improved: ${estimateText(now)}, ${measured} (${was})` };
      return {
        outcome: 'does-not-replicate',
        why: `improved, but by ${estimateText(now)}, which does not agree with the ${was}`,
      };
    }
  }
}

export interface ReplayJudgement {
  readonly verdict: Exclude<ReplayVerdict, 'failed'> | 'failed';
  readonly reason: string | null;
  readonly judged: number;
  readonly replicated: number;
  readonly share: number | null;
  readonly replicatedWorkloads: string[];
}

/** The replay's verdict from its workloads' outcomes (null outcome: not judged). */
export function judgeReplay(workloads: readonly Pick<ReplayWorkload, 'name' | 'outcome' | 'why'>[]): ReplayJudgement {
  const judged = workloads.filter((w) => w.outcome !== null);
  const replicated = judged.filter((w) => w.outcome === 'replicates');
  const share = judged.length === 0 ? null : replicated.length / judged.length;
  const base = { judged: judged.length, replicated: replicated.length, share, replicatedWorkloads: replicated.map((w) => w.name) };
  if (judged.length === 0) return { verdict: 'failed', reason: 'nothing-to-replicate', ...base };
  const against = judged.find((w) => w.outcome === 'does-not-replicate');
  if (against) return { verdict: 'does-not-replicate', reason: 'workload-does-not-replicate', ...base };
  if (replicated.length === judged.length) return { verdict: 'replicates', reason: null, ...base };
  return { verdict: 'inconclusive', reason: 'underpowered', ...base };
}
