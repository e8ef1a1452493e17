import { ItemError } from '../../pipeline/errors.js';
import { parseBenchmarksFile, type BenchmarkInfo } from '../../pipeline/concepts/asv/benchmarks.js';
import { resultSetOf, type ResultSet } from '../../pipeline/concepts/asv/result-set.js';
import { parseResultsFile } from '../../pipeline/concepts/asv/results.js';
import type { ValidateConfig } from './config.js';
import type { MeasurementEvidence } from './decide.js';
import type { MeasuredCandidate, InvocationRecord, InvocationStatus, Measured, MeasureDeps } from './measured.js';
import type { AsvRunSettings } from './protocol/asv-invocation.js';
import { measurementSchedule, type InvocationRole, type PlannedInvocation } from './protocol/schedule.js';
import { twoVerdicts } from './two-verdicts.js';

/**
 * Validate's measurement with the real asv (engine asv): whole invocations, each in a fresh
 * container with its own results file, base and expert alternating A B B A with base/base
 * calibration pairs interleaved, within the time budget; perfmine's verdict on the invocation
 * pairs (normalized by machine factor), asv's on the pooled samples.
 */

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

export async function measureWithAsv(
  candidate: MeasuredCandidate,
  expertImage: string,
  invocations: InvocationRecord[],
  deps: MeasureDeps,
): Promise<Measured> {
  const { runner, config, log, signal } = deps;
  const env = candidate.environment;
  const imageOf = (inv: PlannedInvocation) => (inv.image === 'expert' ? expertImage : env.baseImage);
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
      for (const inv of group)
        invocations.push({
          seq: inv.seq,
          role: inv.role,
          pair: inv.pair,
          image: inv.image,
          status: 'not-run',
          asvExitCode: null,
          commit: null,
          results: null,
          log: '',
          durationMs: 0,
        });
      continue;
    }
    for (const inv of group) {
      const run = await runner.runInvocation(
        env,
        imageOf(inv),
        inv,
        candidate.layout,
        settings,
        config.invocationTimeoutSeconds * 1000,
        signal,
      );
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
      if (status === 'timed-out' || status === 'asv-failed')
        problems.push(`invocation ${inv.seq} (${inv.role}): ${status}${out.asvExitCode === null ? '' : ` (asv exit ${out.asvExitCode})`}`);
      const record: InvocationRecord = {
        seq: inv.seq,
        role: inv.role,
        pair: inv.pair,
        image: inv.image,
        status,
        asvExitCode: out.asvExitCode,
        commit: out.commit,
        results: out.results,
        log: out.log,
        durationMs: run.durationMs,
      };
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
    baseSide.first.length > 0
      ? twoVerdicts(
          { base: baseSide.first, expert: baseSide.second, calibration },
          { paired: config.paired, factor: config.factor, benchmarks },
        )
      : null;
  const evidence: MeasurementEvidence = {
    suiteNotImportable,
    baseMeasured: Math.max(0, ...parsed.filter((p) => p.record.image === 'base').map((p) => measuredCount(p.set))),
    expertMeasured: Math.max(0, ...parsed.filter((p) => p.record.image === 'expert').map((p) => measuredCount(p.set))),
    pairs: baseSide.first.length,
    minPairs: config.paired.minPairs,
    calibrated: verdicts?.paired.calibration.calibrated ?? false,
    improved: verdicts?.workloads.filter((w) => w.paired.change === 'improved').map((w) => w.name) ?? [],
    problems: budgetExhausted ? [...problems, 'time budget reached'] : problems,
  };
  const protocol = {
    engine: 'asv',
    pairs: config.pairs,
    calibrationPairs: config.calibrationPairs,
    schedule: measurementSchedule(config.pairs, config.calibrationPairs).map((i) => i.role),
  };
  return { verdicts, evidence, benchmarksJson, budgetExhausted, protocol, harness: null };
}

function lastLines(text: string, n: number): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}
