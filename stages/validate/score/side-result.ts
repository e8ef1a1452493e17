import type { CandidateValidation } from '../validate-candidate.js';

/**
 * What scoring keeps of one side's run through validate's machinery (the patch applied and built,
 * the tests and the snapshot checked, then measured against the base with the engine and protocol
 * of validate): the named failure or none, per-workload speedups and verdicts (none when a check
 * failed before the measurement). Pure.
 */

/** Why a patch failed, in validate's words where the patched side is called the expert. */
export const SCORE_FAILURES = [
  'empty-patch',
  'patch-does-not-apply',
  'build-failed',
  'suite-not-importable',
  'benchmarks-fail-on-base',
  'benchmarks-fail-on-patch',
  'measurement-incomplete',
  'tests-not-collected',
  'tests-regressed',
  'snapshot-mismatch',
] as const;
export type ScoreFailure = (typeof SCORE_FAILURES)[number];

export interface WorkloadResult {
  readonly name: string;
  /** time(base) / time(patched) of the pooled medians; null when not timed on both sides. */
  readonly speedup: number | null;
  /** perfmine's paired verdict on this side against the base. */
  readonly change: string;
  readonly reason: string | null;
  /** The minimum detectable speedup of the workload in this measurement. */
  readonly mds: number | null;
  readonly asvMark: string;
}

export interface SideResult {
  readonly failure: ScoreFailure | null;
  readonly detail: string;
  /** Tests the base passes that the patch does not pass (tests-regressed names them). */
  readonly regressedTests: readonly string[];
  readonly snapshotMismatches: readonly string[];
  readonly workloads: readonly WorkloadResult[];
  readonly pairs: number;
  readonly falsePositiveRate: number | null;
  readonly protocol: Readonly<Record<string, unknown>> | null;
}

function failureOf(reason: string): ScoreFailure {
  switch (reason) {
    case 'expert-build-failed':
      return 'build-failed';
    case 'benchmarks-fail-on-expert':
      return 'benchmarks-fail-on-patch';
    case 'no-improvement':
      // validate's keep rule; scoring runs with requireImprovement false and never sees it
      throw new Error('no-improvement is not a scoring failure');
    default:
      return reason as ScoreFailure;
  }
}

export function sideResultOf(v: CandidateValidation): SideResult {
  const d = v.decision;
  const workloads = (v.verdicts?.workloads ?? [])
    .map((w): WorkloadResult => ({
      name: w.name,
      speedup: w.speedup,
      change: w.paired.change,
      reason: w.paired.reason,
      mds: w.paired.mds,
      asvMark: w.asv.mark,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    failure: d.kept ? null : failureOf(d.reason),
    detail: d.detail,
    regressedTests: v.tests?.comparison?.regressions.map((r) => r.test) ?? [],
    snapshotMismatches: v.snapshot?.mismatches.map((m) => m.name) ?? [],
    workloads,
    pairs: v.verdicts?.paired.pairs ?? 0,
    falsePositiveRate: v.verdicts?.paired.calibration.falsePositives.rate ?? null,
    protocol: v.protocol,
  };
}

/** The empty patch: nothing to build or measure; scored as the unchanged repository. */
export function emptyPatchResult(detail = 'the patch is empty'): SideResult {
  return {
    failure: 'empty-patch',
    detail,
    regressedTests: [],
    snapshotMismatches: [],
    workloads: [],
    pairs: 0,
    falsePositiveRate: null,
    protocol: null,
  };
}

/** The per-workload speedups a side was measured with (failed or untimed workloads left out). */
export function speedupsOf(side: SideResult): Map<string, number> {
  return new Map(
    side.workloads.flatMap((w) =>
      w.speedup !== null && Number.isFinite(w.speedup) && w.speedup > 0 ? [[w.name, w.speedup] as const] : [],
    ),
  );
}
