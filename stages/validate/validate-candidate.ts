import type { Logger } from '../../pipeline/logging.js';
import { ItemError } from '../../pipeline/errors.js';
import { parseBenchmarksFile, type BenchmarkInfo } from './asv/benchmarks.js';
import { resultSetOf, type ResultSet } from './asv/result-set.js';
import { parseResultsFile } from './asv/results.js';
import type { ValidateConfig } from './config.js';
import { parseSnapshotComparison, parseSnapshotRecord, SnapshotFormatError, summarizeSnapshot, type SnapshotSummary } from './correctness/snapshot.js';
import { compareTests, readPytestRun, type PytestReading, type TestComparison } from './correctness/tests.js';
import { decideSoFar, type Decision, type Evidence, type MeasurementEvidence } from './decide.js';
import type { AsvLayout, AsvRunSettings } from './protocol/asv-invocation.js';
import { measurementSchedule, type InvocationRole, type PlannedInvocation } from './protocol/schedule.js';
import type { CandidateEnvironment, MeasurementRunner, SnapshotRequest } from './runner-port.js';
import { twoVerdicts, type TwoVerdictReport } from './two-verdicts.js';

/**
 * One candidate through validate: build the expert image, measure base and expert in the A B B A
 * schedule (each invocation in a fresh container, its results file kept), decide both verdicts
 * per workload, and for a candidate with an improved workload check the tests and the snapshot.
 * Stops at the first check that drops it. All container work goes through the MeasurementRunner
 * seam; the decisions are decide.ts's.
 */

export interface Candidate {
  readonly key: string;
  readonly patch: string;
  readonly environment: CandidateEnvironment;
  readonly layout: AsvLayout;
}

export type InvocationStatus = 'ok' | 'asv-failed' | 'timed-out' | 'malformed' | 'not-run';

export interface InvocationRecord {
  readonly seq: number;
  readonly role: InvocationRole;
  readonly pair: number;
  readonly image: 'base' | 'expert';
  readonly status: InvocationStatus;
  readonly asvExitCode: number | null;
  /** The commit asv labelled the results with (the checkout's HEAD in the image). */
  readonly commit: string | null;
  /** The invocation's results file, raw, as asv wrote it. */
  readonly results: string | null;
  readonly log: string;
  readonly durationMs: number;
}

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
  /** Pairs left out because the next would have passed the time budget. */
  readonly budgetExhausted: boolean;
}

export interface ValidateDeps {
  readonly runner: MeasurementRunner;
  readonly config: ValidateConfig;
  readonly log: Logger;
  readonly signal?: AbortSignal;
}

function runSettings(config: ValidateConfig): AsvRunSettings {
  const attributes: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(config.attributes)) if (v !== undefined) attributes[k] = v;
  return { machine: config.machine, bench: config.bench, rounds: config.rounds, attributes, cpuAffinity: config.cpuAffinity };
}

/** Invocations grouped as they run: each A/B pair, each calibration pair. */
function groups(schedule: readonly PlannedInvocation[]): PlannedInvocation[][] {
  const out: PlannedInvocation[][] = [];
  for (const inv of schedule) {
    const last = out.at(-1);
    const kind = (i: PlannedInvocation) => (i.role === 'base' || i.role === 'expert' ? 'ab' : 'cal');
    if (last && last.length < 2 && kind(last[0]!) === kind(inv) && last[0]!.pair === inv.pair) last.push(inv);
    else out.push([inv]);
  }
  return out;
}

interface Parsed {
  readonly record: InvocationRecord;
  readonly set: ResultSet | null;
  readonly benchmarks: string | null;
}

function measuredCount(set: ResultSet | null): number {
  return set ? set.workloads.filter((w) => typeof w.value === 'number' && Number.isFinite(w.value) && w.value > 0).length : 0;
}

/** Sides of complete pairs only, so that pair p of one side meets pair p of the other. */
function sides(parsed: readonly Parsed[], first: InvocationRole, second: InvocationRole): { first: ResultSet[]; second: ResultSet[] } {
  const byPair = new Map<number, { a?: ResultSet; b?: ResultSet }>();
  for (const p of parsed) {
    if (!p.set || (p.record.role !== first && p.record.role !== second)) continue;
    const entry = byPair.get(p.record.pair) ?? {};
    if (p.record.role === first) entry.a = p.set;
    else entry.b = p.set;
    byPair.set(p.record.pair, entry);
  }
  const complete = [...byPair.entries()].filter(([, e]) => e.a && e.b).sort(([x], [y]) => x - y);
  return { first: complete.map(([, e]) => e.a!), second: complete.map(([, e]) => e.b!) };
}

export async function validateCandidate(candidate: Candidate, deps: ValidateDeps): Promise<CandidateValidation> {
  const { runner, config, log, signal } = deps;
  const env = candidate.environment;
  const invocations: InvocationRecord[] = [];
  const done = (decision: Decision, rest: Partial<CandidateValidation> = {}): CandidateValidation => ({
    decision,
    expertImage: null,
    invocations,
    verdicts: null,
    benchmarksJson: null,
    tests: null,
    snapshot: null,
    budgetExhausted: false,
    ...rest,
  });

  // 1. the expert image: the base commit with the patch applied, the build script rerun, verified
  const built = await runner.buildExpert(env, candidate.patch, config.buildTimeoutSeconds * 1000, signal);
  log.info({ ok: built.reading.ok, durationMs: built.durationMs }, 'expert image');
  const evidence: { -readonly [K in keyof Evidence]: Evidence[K] } = { expertBuild: built.reading };
  const early = decideSoFar(evidence);
  if (early || built.image === null) return done(early ?? { kept: false, reason: 'expert-build-failed', detail: 'no expert image' });
  const expertImage = built.image;
  let result: CandidateValidation;
  try {
    result = await measureAndCheck(candidate, deps, evidence, expertImage, invocations, done);
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

async function measureAndCheck(
  candidate: Candidate,
  deps: ValidateDeps,
  evidence: { -readonly [K in keyof Evidence]: Evidence[K] },
  expertImage: string,
  invocations: InvocationRecord[],
  done: Done,
): Promise<CandidateValidation> {
  const { runner, config, log, signal } = deps;
  const env = candidate.environment;
  const imageOf = (inv: PlannedInvocation) => (inv.image === 'expert' ? expertImage : env.baseImage);

  // 2. measurement, A B B A with interleaved calibration pairs, within the time budget
  const settings = runSettings(config);
  const schedule = measurementSchedule(config.pairs, config.calibrationPairs);
  const parsed: Parsed[] = [];
  const problems: string[] = [];
  let spentMs = 0;
  let longestMs = 0;
  let budgetExhausted = false;
  let suiteNotImportable: string | null = null;
  for (const group of groups(schedule)) {
    if (spentMs > 0 && spentMs + group.length * longestMs > config.timeBudgetSeconds * 1000) {
      budgetExhausted = true;
      for (const inv of group) invocations.push({ seq: inv.seq, role: inv.role, pair: inv.pair, image: inv.image, status: 'not-run', asvExitCode: null, commit: null, results: null, log: '', durationMs: 0 });
      continue;
    }
    for (const inv of group) {
      const run = await runner.runInvocation(env, imageOf(inv), inv, candidate.layout, settings, config.invocationTimeoutSeconds * 1000, signal);
      spentMs += run.durationMs;
      longestMs = Math.max(longestMs, run.durationMs);
      const out = run.output;
      let set: ResultSet | null = null;
      let status: InvocationStatus = run.timedOut ? 'timed-out' : out.results === null ? 'asv-failed' : 'ok';
      if (out.results !== null) {
        try {
          set = resultSetOf(parseResultsFile(out.results, `${candidate.key} ${inv.file}`));
        } catch (error) {
          if (!(error instanceof ItemError)) throw error;
          status = 'malformed';
          problems.push(`invocation ${inv.seq} (${inv.role}): ${error.message}`);
        }
      }
      if (status === 'timed-out' || status === 'asv-failed') problems.push(`invocation ${inv.seq} (${inv.role}): ${status}${out.asvExitCode === null ? '' : ` (asv exit ${out.asvExitCode})`}`);
      const record: InvocationRecord = { seq: inv.seq, role: inv.role, pair: inv.pair, image: inv.image, status, asvExitCode: out.asvExitCode, commit: out.commit, results: out.results, log: out.log, durationMs: run.durationMs };
      invocations.push(record);
      parsed.push({ record, set, benchmarks: out.benchmarks });
      log.info({ seq: inv.seq, role: inv.role, status, measured: measuredCount(set), durationMs: run.durationMs }, 'asv invocation');
      if (out.suiteNotImportable && inv.image === 'base') suiteNotImportable = lastLines(out.log, 12);
      if (inv.seq === 1 && (suiteNotImportable !== null || measuredCount(set) === 0)) break;
    }
    const first = parsed[0];
    if (first && first.record.seq === 1 && (suiteNotImportable !== null || measuredCount(first.set) === 0)) break;
  }

  const baseSide = sides(parsed, 'base', 'expert');
  const calibration = sides(parsed, 'calibration-first', 'calibration-second');
  const benchmarksJson = parsed.find((p) => p.benchmarks !== null)?.benchmarks ?? null;
  let benchmarks: ReadonlyMap<string, BenchmarkInfo> | null = null;
  if (benchmarksJson !== null) {
    try {
      benchmarks = parseBenchmarksFile(benchmarksJson, `${candidate.key} benchmarks.json`);
    } catch (error) {
      if (!(error instanceof ItemError)) throw error;
      problems.push(error.message);
    }
  }
  const verdicts =
    baseSide.first.length > 0 ? twoVerdicts({ base: baseSide.first, expert: baseSide.second, calibration }, { paired: config.paired, factor: config.factor, benchmarks }) : null;
  const measurement: MeasurementEvidence = {
    suiteNotImportable,
    baseMeasured: Math.max(0, ...parsed.filter((p) => p.record.image === 'base').map((p) => measuredCount(p.set))),
    expertMeasured: Math.max(0, ...parsed.filter((p) => p.record.image === 'expert').map((p) => measuredCount(p.set))),
    pairs: baseSide.first.length,
    minPairs: config.paired.minPairs,
    calibrated: verdicts?.paired.calibration.calibrated ?? false,
    improved: verdicts?.workloads.filter((w) => w.paired.change === 'improved').map((w) => w.name) ?? [],
    problems: budgetExhausted ? [...problems, 'time budget reached'] : problems,
  };
  evidence.measurement = measurement;
  const rest = { expertImage, verdicts, benchmarksJson, budgetExhausted };
  const afterMeasurement = decideSoFar(evidence);
  log.info({ pairs: measurement.pairs, improved: measurement.improved.length, calibrated: measurement.calibrated, budgetExhausted }, 'verdicts');
  if (afterMeasurement) return done(afterMeasurement, rest);

  // 3. tests: the expert must pass every test the base passes
  const testOptions = { args: config.pytestArgs, timeLimitSeconds: config.testTimeoutSeconds };
  const baseReading = readPytestRun(await runner.runTests(env, env.baseImage, testOptions, signal));
  evidence.tests = { base: baseReading };
  let tests: TestsSummary = { baseCollected: baseReading.collected, why: baseReading.collected ? null : baseReading.why, comparison: null };
  const notCollected = decideSoFar(evidence);
  if (notCollected || !baseReading.collected) return done(notCollected ?? { kept: false, reason: 'tests-not-collected', detail: 'no report' }, { ...rest, tests });
  const expertReading: PytestReading = readPytestRun(await runner.runTests(env, expertImage, testOptions, signal));
  const comparison = compareTests(baseReading.report, expertReading.collected ? expertReading.report : { tests: new Map(), collectionErrors: [] }, {
    base: baseReading.hitTimeLimit,
    expert: expertReading.collected ? expertReading.hitTimeLimit : true,
  });
  evidence.tests = { base: baseReading, comparison };
  tests = { ...tests, comparison };
  log.info({ basePassed: comparison.basePassed, expertPassed: comparison.expertPassed, regressions: comparison.regressions.length }, 'tests');
  const regressed = decideSoFar(evidence);
  if (regressed) return done(regressed, { ...rest, tests });

  // 4. snapshot: the benchmarks' return values on the expert match the base's
  const request: SnapshotRequest = {
    configPath: candidate.layout.configPath,
    bench: config.bench,
    perCallSeconds: config.snapshotCallSeconds,
    timeLimitSeconds: config.snapshotTimeoutSeconds,
  };
  const recorded = await runner.recordSnapshot(env, env.baseImage, request, signal);
  if (recorded.json === null) {
    throw new ItemError('snapshot-failed', `${candidate.key}: the snapshot helper wrote nothing on the base (${recorded.timedOut ? 'time limit' : `exit ${recorded.exitCode ?? 'none'}`}): ${lastLines(recorded.log, 8)}`, {
      fix: 'raise validate.snapshotTimeoutSeconds, or look at the log tail',
    });
  }
  const compared = await runner.compareSnapshot(env, expertImage, recorded.json, request, signal);
  let snapshot: SnapshotSummary;
  try {
    const record = parseSnapshotRecord(recorded.json);
    if (compared.json === null) {
      snapshot = { ...summarizeSnapshot(record, null), mismatches: [{ name: '(all)', reason: `the helper failed on the expert: ${lastLines(compared.log, 4)}` }] };
    } else {
      snapshot = summarizeSnapshot(record, parseSnapshotComparison(compared.json));
    }
  } catch (error) {
    if (error instanceof SnapshotFormatError) throw new ItemError('snapshot-malformed', `${candidate.key}: ${error.message}`, { cause: error });
    throw error;
  }
  evidence.snapshot = snapshot;
  log.info({ equal: snapshot.equal, skipped: snapshot.skipped, mismatches: snapshot.mismatches.length }, 'snapshot');
  const final = decideSoFar(evidence);
  if (!final) throw new ItemError('decision-incomplete', `${candidate.key}: every check ran but no decision was made`);
  return done(final, { ...rest, tests, snapshot });
}

function lastLines(text: string, n: number): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}
