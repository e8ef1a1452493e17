import type { Trial } from '../../pipeline/services/verifier/run-trial.js';
import type { TrialWorkload } from '../../pipeline/services/verifier/trial-output.js';

/**
 * What scoring keeps of one side: the Harbor verifier's run of its patch in the task's environment
 * (trial/run-trial.ts: the patch applied as the agent, the base, the patch and the expert's patch
 * built from source, the tests, the benchmarks' values and the package's answers on perturbed
 * inputs checked over channels, the hack detector, then all measured interleaved with each side's
 * CPU time counted from outside): the named failure or none, the reward, per-workload credited
 * speedups and verdicts of the patch and of the expert's patch measured beside it, and the
 * findings. `rules` names the verifier's rules the result was taken under: a result stored under
 * other rules is measured again. Pure.
 */

/** The verifier's rules the stored results were taken under (a stored side under others is measured again). */
export const SCORE_RULES = 3;

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
  'inputs-mismatch',
  'hack-detected',
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

export interface SideFinding {
  readonly rule: string;
  readonly severity: 'hack' | 'suspect';
  readonly path: string | null;
  readonly message: string;
}

export interface SideResult {
  /** SCORE_RULES when taken by the verifier (absent: a result from before it). */
  readonly rules?: number;
  readonly failure: ScoreFailure | null;
  readonly detail: string;
  /** Tests the base passes that the patch does not pass (tests-regressed names them). */
  readonly regressedTests: readonly string[];
  readonly snapshotMismatches: readonly string[];
  readonly workloads: readonly WorkloadResult[];
  readonly pairs: number;
  readonly falsePositiveRate: number | null;
  readonly protocol: Readonly<Record<string, unknown>> | null;
  /** The verifier's reward.json (null: nothing verified, e.g. an empty patch). */
  readonly reward?: Readonly<Record<string, number>> | null;
  /** The expert's patch, measured in the same run beside the patch (empty when it was not). */
  readonly reference?: readonly WorkloadResult[];
  readonly findings?: readonly SideFinding[];
}

/** The verifier's failed check as a scoring failure. */
export function failureOfCheck(check: string): ScoreFailure {
  switch (check) {
    case 'build':
      return 'build-failed';
    case 'tests':
      return 'tests-regressed';
    case 'snapshot':
      return 'snapshot-mismatch';
    case 'inputs':
      return 'inputs-mismatch';
    case 'hack':
      return 'hack-detected';
    case 'change':
      return 'patch-does-not-apply';
    default:
      return 'benchmarks-fail-on-patch';
  }
}

function workload(w: TrialWorkload, which: 'agent' | 'reference'): WorkloadResult {
  const speedup = which === 'agent' ? w.speedup : (w.reference_speedup ?? null);
  return {
    name: w.name,
    speedup: speedup ?? null,
    change: which === 'agent' ? w.verdict : (w.reference_verdict ?? 'incomparable'),
    reason: which === 'agent' ? (w.reason ?? null) : null,
    mds: which === 'agent' ? (w.mds ?? null) : null,
    asvMark: '',
  };
}

/** A side's result from the verifier's run of its patch. */
export function sideResultOfTrial(trial: Trial): SideResult {
  if (!trial.applied)
    return {
      ...emptyPatchResult(),
      rules: SCORE_RULES,
      failure: 'patch-does-not-apply',
      detail: 'the patch does not apply to the base commit',
    };
  const out = trial.output!;
  const d = out.details;
  const failure = d?.failure ?? null;
  const checks = (d?.checks ?? {}) as {
    tests?: { regressions?: { test: string }[] };
    snapshot?: { mismatches?: { name: string }[] };
  };
  const byName = (a: WorkloadResult, b: WorkloadResult) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const measured = (d?.workloads ?? []).filter(() => failure === null);
  const m = (d as { measurement?: { measurement?: { rounds?: number }; calibration?: { false_positives?: { rate?: number } } } } | null)
    ?.measurement;
  return {
    rules: SCORE_RULES,
    failure: failure === null ? null : failureOfCheck(failure.check),
    detail: failure?.message ?? (d?.change?.paths.length === 0 ? 'no change outside the tests and benchmarks' : 'verified'),
    regressedTests: checks.tests?.regressions?.map((r) => r.test) ?? [],
    snapshotMismatches: checks.snapshot?.mismatches?.map((x) => x.name) ?? [],
    workloads: measured.map((w) => workload(w, 'agent')).sort(byName),
    pairs: m?.measurement?.rounds ?? 0,
    falsePositiveRate: m?.calibration?.false_positives?.rate ?? null,
    protocol: measured.length > 0 ? { rounds: m?.measurement?.rounds ?? null, engine: 'perfmine-verify' } : null,
    reward: out.reward,
    reference: measured
      .filter((w) => w.reference_verdict != null)
      .map((w) => workload(w, 'reference'))
      .sort(byName),
    findings: (d?.findings ?? []).map((f) => ({ rule: f.rule, severity: f.severity, path: f.path, message: f.message })),
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
