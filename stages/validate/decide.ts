import type { TestComparison, PytestReading } from './correctness/tests.js';
import type { SnapshotSummary } from './correctness/snapshot.js';
import type { ExpertBuildReading } from './protocol/expert-image.js';

/**
 * The keep / drop decision of a candidate from the evidence gathered so far, checks in the order
 * the stage runs them: the expert builds (patch applies, build script passes); the suite imports
 * and its benchmarks run on the base; the expert's benchmarks run; enough pairs were measured and
 * calibrated; at least one workload is improved by the paired verdict; then (only for those) the
 * tests are collected on the base and the expert passes every test the base passes; the snapshot
 * of benchmark return values matches. Scoring checks the tests and the snapshot before the
 * measurement (decideSoFar). Pure.
 */

export const DROP_REASONS = [
  'patch-does-not-apply',
  'expert-build-failed',
  'suite-not-importable',
  'benchmarks-fail-on-base',
  'benchmarks-fail-on-expert',
  'measurement-incomplete',
  'no-improvement',
  'tests-not-collected',
  'tests-regressed',
  'snapshot-mismatch',
] as const;
export type DropReason = (typeof DROP_REASONS)[number];

export type Decision =
  { readonly kept: true; readonly detail: string } | { readonly kept: false; readonly reason: DropReason; readonly detail: string };

export interface MeasurementEvidence {
  /** asv's discovery message when the suite could not be imported, else null. */
  readonly suiteNotImportable: string | null;
  /** Workloads measured (a usable median) in the best base invocation. */
  readonly baseMeasured: number;
  /** Workloads measured in the best expert invocation. */
  readonly expertMeasured: number;
  /** Complete base/expert pairs. */
  readonly pairs: number;
  readonly minPairs: number;
  readonly calibrated: boolean;
  /** Workloads the paired verdict calls improved. */
  readonly improved: readonly string[];
  /** Invocations that failed or were cut by the time budget, for the detail. */
  readonly problems: readonly string[];
  /** Workload selection found no workload that runs the changed code: why (nothing was measured for it). */
  readonly nothingSelected?: string | null;
}

export interface Evidence {
  readonly expertBuild: ExpertBuildReading;
  readonly measurement?: MeasurementEvidence;
  readonly tests?: { readonly base: PytestReading; readonly comparison?: TestComparison };
  readonly snapshot?: SnapshotSummary;
}

const drop = (reason: DropReason, detail: string): Decision => ({ kept: false, reason, detail });

function list(items: readonly string[], n = 5): string {
  return items.length <= n ? items.join(', ') : `${items.slice(0, n).join(', ')} and ${items.length - n} more`;
}

/**
 * How the decision is made: validate requires an improved workload; scoring an agent's patch
 * (`perfmine score`) checks the tests and the snapshot first and measures only a patch that passes them.
 */
export interface DecideOptions {
  readonly requireImprovement: boolean;
}

/** What one group of checks makes of the evidence: a drop, `null` (its evidence is not in yet), or passed. */
type Step = Decision | null | 'passed';

function buildStep(e: Evidence): Step {
  return e.expertBuild.ok ? 'passed' : drop(e.expertBuild.reason, e.expertBuild.detail);
}

function measurementStep(e: Evidence, options: DecideOptions): Step {
  const m = e.measurement;
  if (!m) return null;
  if (m.suiteNotImportable !== null) return drop('suite-not-importable', m.suiteNotImportable);
  if (m.nothingSelected && options.requireImprovement) return drop('no-improvement', m.nothingSelected);
  if (m.baseMeasured === 0)
    return drop(
      'benchmarks-fail-on-base',
      `no benchmark produced a timing on the base${m.problems.length ? ` (${list(m.problems)})` : ''}`,
    );
  if (m.expertMeasured === 0)
    return drop(
      'benchmarks-fail-on-expert',
      `no benchmark produced a timing on the expert${m.problems.length ? ` (${list(m.problems)})` : ''}`,
    );
  if (m.pairs < m.minPairs || !m.calibrated) {
    return drop(
      'measurement-incomplete',
      `${m.pairs} complete base/expert pairs (at least ${m.minPairs} needed), ${m.calibrated ? 'calibrated' : 'not calibrated'}${m.problems.length ? `: ${list(m.problems)}` : ''}`,
    );
  }
  if (m.improved.length === 0 && options.requireImprovement) return drop('no-improvement', 'no workload is improved by the paired verdict');
  return 'passed';
}

function correctnessStep(e: Evidence): Step {
  const t = e.tests;
  if (!t) return null;
  if (!t.base.collected) return drop('tests-not-collected', t.base.why);
  if (!t.comparison) return null;
  if (t.comparison.regressions.length > 0) {
    const r = t.comparison.regressions;
    return drop(
      'tests-regressed',
      `${r.length} test${r.length === 1 ? '' : 's'} passing on the base do not pass on the expert: ${list(r.map((x) => `${x.test} (${x.expert})`))}${t.comparison.expertHitTimeLimit ? '; the expert run hit the time limit' : ''}`,
    );
  }
  const s = e.snapshot;
  if (!s) return null;
  if (s.baseImportErrors.length > 0)
    return drop(
      'suite-not-importable',
      `the snapshot helper cannot import ${list(s.baseImportErrors.map((x) => `${x.module} (${x.error})`))}`,
    );
  if (s.expertImportErrors.length > 0)
    return drop('snapshot-mismatch', `the expert cannot import ${list(s.expertImportErrors.map((x) => `${x.module} (${x.error})`))}`);
  if (s.mismatches.length > 0)
    return drop(
      'snapshot-mismatch',
      `return values differ: ${list(
        s.mismatches.map((x) => `${x.name}: ${x.reason ?? 'differs'}`),
        3,
      )}`,
    );
  return 'passed';
}

/**
 * The decision, or null when the evidence so far passes and the next check must run. Validate
 * measures first (most candidates are dropped there, before the tests cost anything); scoring
 * (`requireImprovement: false`) checks the tests and the snapshot first, so that a patch that
 * breaks a test or changes a value costs no measurement (it is scored as the unchanged code).
 */
export function decideSoFar(e: Evidence, options: DecideOptions = { requireImprovement: true }): Decision | null {
  const steps = correctnessFirst(options)
    ? [buildStep(e), correctnessStep(e), measurementStep(e, options)]
    : [buildStep(e), measurementStep(e, options), correctnessStep(e)];
  for (const step of steps) if (step !== 'passed') return step;
  const improved = e.measurement!.improved;
  return { kept: true, detail: `${improved.length} workload${improved.length === 1 ? '' : 's'} improved: ${list(improved)}` };
}

/** Whether the tests and the snapshot run before the measurement (scoring) or after it (validate). */
export function correctnessFirst(options: DecideOptions): boolean {
  return !options.requireImprovement;
}
