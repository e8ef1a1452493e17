import { JunitError, parseJunitXml, type JunitReport, type TestOutcome } from './junit.js';

/**
 * The correctness gate on tests: pytest on the base and on the expert image under a time limit;
 * the expert must pass every test the base passes. Pure.
 */

/** What a pytest run in a container gave back. */
export interface PytestRun {
  /** The exit code of `timeout … python -m pytest`: 124 when the time limit was hit. */
  readonly exitCode: number | null;
  /** The container itself was killed at its (longer) timeout. */
  readonly timedOut: boolean;
  readonly junitXml: string | null;
  readonly log: string;
}

/** `timeout`'s exit code when the limit was reached. */
export const TIMEOUT_EXIT = 124;

export type PytestReading =
  | { readonly collected: true; readonly report: JunitReport; readonly hitTimeLimit: boolean; readonly exitCode: number | null }
  | { readonly collected: false; readonly why: string };

/**
 * Whether the tests could be collected, and the outcomes when they were. pytest exit codes: 0 all
 * passed, 1 some failed, 2 interrupted (collection errors, or the time limit's SIGINT), 3 internal
 * error, 4 usage error, 5 no tests collected.
 */
export function readPytestRun(run: PytestRun): PytestReading {
  if (run.junitXml === null)
    return {
      collected: false,
      why: run.timedOut
        ? 'pytest was killed at the container timeout before writing its report'
        : `pytest wrote no report (exit ${run.exitCode ?? 'none'})`,
    };
  let report: JunitReport;
  try {
    report = parseJunitXml(run.junitXml);
  } catch (error) {
    if (error instanceof JunitError) return { collected: false, why: `unreadable JUnit report: ${error.message}` };
    throw error;
  }
  const hitTimeLimit = run.exitCode === TIMEOUT_EXIT || run.timedOut;
  if (report.collectionErrors.length > 0)
    return {
      collected: false,
      why: `collection errors in ${report.collectionErrors.slice(0, 5).join(', ')}${report.collectionErrors.length > 5 ? ', …' : ''}`,
    };
  if (run.exitCode === 5 || report.tests.size === 0) return { collected: false, why: 'no tests collected' };
  if (!hitTimeLimit && (run.exitCode === 3 || run.exitCode === 4))
    return { collected: false, why: `pytest exited ${run.exitCode} (${run.exitCode === 3 ? 'internal error' : 'usage error'})` };
  return { collected: true, report, hitTimeLimit, exitCode: run.exitCode };
}

export interface TestRegression {
  readonly test: string;
  /** The expert's outcome, or `not-run` when the expert's report does not have the test. */
  readonly expert: TestOutcome | 'not-run';
}

export interface TestComparison {
  readonly basePassed: number;
  readonly expertPassed: number;
  readonly regressions: readonly TestRegression[];
  readonly baseHitTimeLimit: boolean;
  readonly expertHitTimeLimit: boolean;
}

/** Every test the base passes must pass on the expert (a skip or a missing test counts against it). */
export function compareTests(base: JunitReport, expert: JunitReport, limits: { base: boolean; expert: boolean }): TestComparison {
  const regressions: TestRegression[] = [];
  let basePassed = 0;
  for (const [test, outcome] of base.tests) {
    if (outcome !== 'passed') continue;
    basePassed += 1;
    const e = expert.tests.get(test);
    if (e !== 'passed') regressions.push({ test, expert: e ?? 'not-run' });
  }
  const expertPassed = [...expert.tests.values()].filter((o) => o === 'passed').length;
  return { basePassed, expertPassed, regressions, baseHitTimeLimit: limits.base, expertHitTimeLimit: limits.expert };
}
