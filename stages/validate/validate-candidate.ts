import { measuredPatch } from '../../pipeline/concepts/measured-patch.js';
import { ItemError } from '../../pipeline/errors.js';
import {
  parseSnapshotComparison,
  parseSnapshotRecord,
  SnapshotFormatError,
  summarizeSnapshot,
  type SnapshotSummary,
} from './correctness/snapshot.js';
import { compareTests, readPytestRun, type PytestReading, type TestComparison } from './correctness/tests.js';
import { correctnessFirst, decideSoFar, type Decision, type DecideOptions, type Evidence } from './decide.js';
import type { InterleavedMeasurement } from './harness/interleave.js';
import type { Selection } from './selection.js';
import type { FingerprintAccount, MeasuredCandidate, InvocationRecord, InvocationStatus, MeasureDeps } from './measured.js';
import { measureWithAsv } from './measure-asv.js';
import { measureWithHarness } from './measure-harness.js';
import type { SnapshotRequest } from './runner-port.js';
import type { TwoVerdictReport } from './two-verdicts.js';

/**
 * One candidate through validate: build the expert image, measure base and expert in the A B B A
 * schedule (each invocation in a fresh container, its results file kept), decide both verdicts
 * per workload, and for a candidate with an improved workload check the tests and the snapshot
 * (scoring an agent's patch checks the tests and the snapshot first, and measures only a patch
 * that passes them). Stops at the first check that drops it. All container work goes through the
 * MeasurementRunner seam; the decisions are decide.ts's.
 */

export interface TestsSummary {
  readonly baseCollected: boolean;
  readonly why: string | null;
  readonly comparison: TestComparison | null;
}

export interface CandidateValidation {
  readonly decision: Decision;
  readonly expertImage: string | null;
  readonly invocations: readonly InvocationRecord[];
  readonly verdicts: TwoVerdictReport | null;
  readonly benchmarksJson: string | null;
  readonly tests: TestsSummary | null;
  readonly snapshot: SnapshotSummary | null;
  /** Pairs or rounds left out because the next would have passed the time budget. */
  readonly budgetExhausted: boolean;
  /** The engine's protocol as measured (engine, pairs or rounds, mode, cpus, seed). */
  readonly protocol: Readonly<Record<string, unknown>> | null;
  /** The harness's samples (engine perfmine). */
  readonly harness: InterleavedMeasurement | null;
  /** Which workloads were measured, and why (null: all, without selection). */
  readonly selection: Selection | null;
  /** How the fingerprints behind the selection were had (null or absent: no fingerprints). */
  readonly fingerprints?: FingerprintAccount | null;
  /** How long the expert image took to build and verify (ms); null when it was not reached. */
  readonly expertBuildMs?: number | null;
  /** The paths whose changes the patch brought and that were not applied: benchmarks, asv config, tests (measured-patch.ts). */
  readonly patchDropped?: readonly string[];
}

export type ValidateDeps = MeasureDeps;
export type { MeasuredCandidate, InvocationRecord, InvocationStatus };

/** `requireImprovement: false` (scoring an agent's patch): the tests and the snapshot first, then the measurement, whatever it finds. */
export async function validateCandidate(
  given: MeasuredCandidate,
  deps: ValidateDeps,
  options: DecideOptions = { requireImprovement: true },
): Promise<CandidateValidation> {
  const { runner, config, log, signal } = deps;
  // the base's suite, asv config and tests on both sides, as the task's verifier keeps them
  const kept = measuredPatch(given.patch, given.layout);
  const candidate: MeasuredCandidate = kept.dropped.length === 0 ? given : { ...given, patch: kept.patch };
  if (kept.dropped.length > 0) log.info({ dropped: kept.dropped }, "the patch's benchmarks, asv config and tests are the base's");
  const env = candidate.environment;
  const invocations: InvocationRecord[] = [];
  let expertBuildMs: number | null = null;
  const done = (decision: Decision, rest: Partial<CandidateValidation> = {}): CandidateValidation => ({
    decision,
    expertBuildMs,
    expertImage: null,
    invocations,
    verdicts: null,
    benchmarksJson: null,
    tests: null,
    snapshot: null,
    budgetExhausted: false,
    protocol: null,
    harness: null,
    selection: null,
    patchDropped: kept.dropped,
    ...rest,
  });

  if (kept.patch.trim() === '')
    return done({
      kept: false,
      reason: 'no-improvement',
      detail: `the patch changes only what both sides keep from the base: ${kept.dropped.join(', ')}`,
    });

  // 1. the expert image: the base commit with the patch applied, the build script rerun, verified
  const built = await runner.buildExpert(env, candidate.patch, config.buildTimeoutSeconds * 1000, signal);
  log.info({ ok: built.reading.ok, durationMs: built.durationMs }, 'expert image');
  expertBuildMs = built.durationMs;
  const evidence: MutableEvidence = { expertBuild: built.reading };
  const early = decideSoFar(evidence, options);
  if (early || built.image === null) return done(early ?? { kept: false, reason: 'expert-build-failed', detail: 'no expert image' });
  const expertImage = built.image;
  let result: CandidateValidation;
  try {
    result = await measureAndCheck(candidate, deps, evidence, expertImage, invocations, done, options);
  } catch (error) {
    await runner.release([expertImage]);
    throw error;
  }
  if (!config.keepExpertImages) {
    await runner.release([expertImage]);
    return result;
  }
  return { ...result, expertImage: await runner.keep(env, expertImage) };
}

type Done = (decision: Decision, rest?: Partial<CandidateValidation>) => CandidateValidation;
type MutableEvidence = { -readonly [K in keyof Evidence]: Evidence[K] };

/** One candidate's check: what it finds goes into `evidence`; it returns the fields of the result it fills. */
type Check = () => Promise<Partial<CandidateValidation>>;

interface CheckInput {
  readonly candidate: MeasuredCandidate;
  readonly deps: ValidateDeps;
  /** Filled by each check as it runs. */
  readonly evidence: MutableEvidence;
  readonly expertImage: string;
}

/**
 * The measurement, the tests and the snapshot, in decide's order (correctnessFirst: the tests and
 * the snapshot before the measurement, when scoring), stopping at the first that drops the patch.
 */
async function measureAndCheck(
  candidate: MeasuredCandidate,
  deps: ValidateDeps,
  evidence: MutableEvidence,
  expertImage: string,
  invocations: InvocationRecord[],
  done: Done,
  options: DecideOptions,
): Promise<CandidateValidation> {
  const input: CheckInput = { candidate, deps, evidence, expertImage };
  const measure: Check = () => measurementCheck(input, invocations);
  const tests: Check = () => testsCheck(input);
  const snapshot: Check = () => snapshotCheck(input);
  const checks = correctnessFirst(options) ? [tests, snapshot, measure] : [measure, tests, snapshot];
  let rest: Partial<CandidateValidation> = { expertImage };
  for (const check of checks) {
    rest = { ...rest, ...(await check()) };
    const decision = decideSoFar(evidence, options);
    if (decision) return done(decision, rest);
  }
  throw new ItemError('decision-incomplete', `${candidate.key}: every check ran but no decision was made`);
}

/** The measurement with the configured engine, within the time budget. */
async function measurementCheck(
  { candidate, deps, evidence, expertImage }: CheckInput,
  invocations: InvocationRecord[],
): Promise<Partial<CandidateValidation>> {
  const { config, log } = deps;
  const env = candidate.environment;
  const measured =
    config.engine === 'perfmine'
      ? await measureWithHarness(env, candidate.layout.configPath, expertImage, deps, {
          patch: candidate.patch,
          benchmarkDir: candidate.layout.benchmarkDir ?? 'benchmarks',
        })
      : await measureWithAsv(candidate, expertImage, invocations, deps);
  const { verdicts, benchmarksJson, budgetExhausted, protocol, harness } = measured;
  const measurement = measured.evidence;
  evidence.measurement = measurement;
  log.info(
    {
      engine: config.engine,
      pairs: measurement.pairs,
      improved: measurement.improved.length,
      calibrated: measurement.calibrated,
      budgetExhausted,
    },
    'verdicts',
  );
  return {
    verdicts,
    benchmarksJson,
    budgetExhausted,
    protocol,
    harness,
    selection: measured.selection ?? null,
    fingerprints: measured.fingerprints ?? null,
  };
}

/** The tests: the expert must pass every test the base passes (the expert's run is skipped when the base collects none). */
async function testsCheck({ candidate, deps, evidence, expertImage }: CheckInput): Promise<Partial<CandidateValidation>> {
  const { runner, config, log, signal } = deps;
  const env = candidate.environment;
  const testOptions = { args: [...config.pytestArgs, ...(env.pytestArgs ?? [])], timeLimitSeconds: config.testTimeoutSeconds };
  const baseReading = readPytestRun(await runner.runTests(env, env.baseImage, testOptions, signal));
  evidence.tests = { base: baseReading };
  const tests: TestsSummary = {
    baseCollected: baseReading.collected,
    why: baseReading.collected ? null : baseReading.why,
    comparison: null,
  };
  if (!baseReading.collected) return { tests };
  const expertReading: PytestReading = readPytestRun(await runner.runTests(env, expertImage, testOptions, signal));
  const comparison = compareTests(
    baseReading.report,
    expertReading.collected ? expertReading.report : { tests: new Map(), collectionErrors: [] },
    {
      base: baseReading.hitTimeLimit,
      expert: expertReading.collected ? expertReading.hitTimeLimit : true,
    },
  );
  evidence.tests = { base: baseReading, comparison };
  log.info(
    { basePassed: comparison.basePassed, expertPassed: comparison.expertPassed, regressions: comparison.regressions.length },
    'tests',
  );
  return { tests: { ...tests, comparison } };
}

/** The snapshot: the benchmarks' return values on the expert match the base's. */
async function snapshotCheck({ candidate, deps, evidence, expertImage }: CheckInput): Promise<Partial<CandidateValidation>> {
  const { runner, config, log, signal } = deps;
  const env = candidate.environment;
  const request: SnapshotRequest = {
    configPath: candidate.layout.configPath,
    bench: config.bench,
    perCallSeconds: config.snapshotCallSeconds,
    timeLimitSeconds: config.snapshotTimeoutSeconds,
  };
  const recorded = await runner.recordSnapshot(env, env.baseImage, request, signal);
  if (recorded.json === null) {
    throw new ItemError(
      'snapshot-failed',
      `${candidate.key}: the snapshot helper wrote nothing on the base (${recorded.timedOut ? 'time limit' : `exit ${recorded.exitCode ?? 'none'}`}): ${lastLines(recorded.log, 8)}`,
      {
        fix: 'raise validate.snapshotTimeoutSeconds, or look at the log tail',
      },
    );
  }
  const compared = await runner.compareSnapshot(env, expertImage, recorded.json, request, signal);
  let snapshot: SnapshotSummary;
  try {
    const record = parseSnapshotRecord(recorded.json);
    if (compared.json === null) {
      snapshot = {
        ...summarizeSnapshot(record, null),
        mismatches: [{ name: '(all)', reason: `the helper failed on the expert: ${lastLines(compared.log, 4)}` }],
      };
    } else {
      snapshot = summarizeSnapshot(record, parseSnapshotComparison(compared.json));
    }
  } catch (error) {
    if (error instanceof SnapshotFormatError)
      throw new ItemError('snapshot-malformed', `${candidate.key}: ${error.message}`, { cause: error });
    throw error;
  }
  evidence.snapshot = snapshot;
  log.info({ equal: snapshot.equal, skipped: snapshot.skipped, mismatches: snapshot.mismatches.length }, 'snapshot');
  return { snapshot };
}

function lastLines(text: string, n: number): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}
