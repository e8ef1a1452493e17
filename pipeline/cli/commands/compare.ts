import { stat } from 'node:fs/promises';
import {
  compareResultSets,
  findBenchmarksFile,
  formatCompareReport,
  isChanged,
  loadSide,
  poolInvocations,
  readBenchmarksFile,
  splitAppendedSamples,
  type BenchmarkInfo,
  type CompareReport,
  type CompareRow,
  type Measurement,
  type ResultSet,
} from '../../concepts/asv/index.js';
import { pairedOptionsSchema, type PairedOptions } from '../../../stages/validate/paired/index.js';
import { twoVerdicts, type TwoVerdictReport, type WorkloadVerdicts } from '../../../stages/validate/two-verdicts.js';
import { formatTwoVerdicts } from '../../../stages/validate/two-verdicts-format.js';
import { ConfigError, ItemError } from '../../errors.js';
import { print, printJson, type GlobalFlags } from '../session.js';

export interface CompareFlags {
  readonly benchmarks?: string;
  readonly factor: string;
  readonly onlyChanged?: boolean;
  readonly split?: boolean;
  /** commander's `--no-stats` */
  readonly stats: boolean;
  /** Two paths (files or directories): base/base calibration invocations, first and second. */
  readonly calibration?: string[];
  /** Split each results file written with --append-samples into invocations of N samples. */
  readonly splitSamples?: string;
  readonly minPairs?: string;
  readonly alpha?: string;
  readonly consistency?: string;
  readonly safetyFactor?: string;
}

/**
 * Registers `perfmine compare <base> <head>`: asv compare's table (or JSON) for two results files;
 * for sides of several invocations (directories of per-invocation results files), asv's verdict
 * on the pooled samples and perfmine's paired verdict beside it.
 */
function parseFactor(text: string): number {
  const factor = Number(text);
  if (text.trim() === '' || !Number.isFinite(factor) || factor <= 0) {
    throw new ConfigError(`--factor: expected a number greater than 0, got ${JSON.stringify(text)}`, {
      reason: 'invalid-flags',
      fix: 'e.g. --factor 1.1',
    });
  }
  return factor;
}

/** Input problems stop the command with exit 2: the operator must point at readable files. */
async function readInput<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (error instanceof ItemError) {
      throw new ConfigError(error.message, {
        reason: 'unreadable-input',
        fix: 'pass asv results files (results/<machine>/<hash>-<env>.json) and, optionally, --benchmarks benchmarks.json',
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * Loads both sides (one result set per invocation file), finds units, decides every workload as
 * asv compare does and prints the table or JSON. Returns the exit code (0); unreadable input
 * throws a ConfigError (exit 2).
 */
export async function compareCommand(base: string, head: string, flags: CompareFlags, globals: GlobalFlags): Promise<number> {
  const factor = parseFactor(flags.factor);
  const paired = pairedOptions(flags);
  const calibrationPaths = flags.calibration ?? [];
  if (flags.calibration !== undefined && calibrationPaths.length !== 2) {
    throw new ConfigError(`--calibration: expected two paths (first and second base/base side), got ${calibrationPaths.length}`, {
      reason: 'invalid-flags',
      fix: 'e.g. --calibration results/aa1 results/aa2',
    });
  }
  const split = flags.splitSamples === undefined ? null : parseCount('--split-samples', flags.splitSamples, 1);
  const load = async (path: string): Promise<ResultSet[]> => {
    const sets = await readInput(() => loadSide(path));
    return split === null ? sets : sets.flatMap((s) => splitAppendedSamples(s, split));
  };
  const baseSets = await load(base);
  const headSets = await load(head);
  const asDirs = await Promise.all([base, head].map(async (p) => ((await isDirectory(p)) ? `${p.replace(/\/+$/, '')}/` : p)));
  const benchmarksPath = flags.benchmarks ?? (await findBenchmarksFile(asDirs));
  const benchmarks = benchmarksPath === null ? null : await readInput(() => readBenchmarksFile(benchmarksPath));

  const invocationMode = asDirs.some((p) => p.endsWith('/')) || calibrationPaths.length > 0 || split !== null;
  if (invocationMode) {
    const calibration =
      calibrationPaths.length === 2 ? { first: await load(calibrationPaths[0]!), second: await load(calibrationPaths[1]!) } : null;
    const two = twoVerdicts({ base: baseSets, expert: headSets, calibration }, { paired, factor, benchmarks });
    const report = flags.stats
      ? two.asv
      : compareResultSets([poolInvocations(baseSets)], [poolInvocations(headSets)], { factor, useStats: false, benchmarks });
    if (globals.json) {
      const json = compareJson(report, baseSets, headSets, benchmarksPath, benchmarks, {
        factor,
        useStats: flags.stats,
        onlyChanged: flags.onlyChanged ?? false,
      });
      printJson(withPaired(json, two, calibration));
    } else {
      const table = formatCompareReport(report, { split: flags.split ?? false, onlyChanged: flags.onlyChanged ?? false });
      print(`${table === '' ? '' : `${table.trimEnd()}\n\n`}${formatTwoVerdicts(two, { onlyChanged: flags.onlyChanged ?? false })}`);
    }
    return 0;
  }

  const report = compareResultSets(baseSets, headSets, { factor, useStats: flags.stats, benchmarks });
  if (globals.json) {
    printJson(
      compareJson(report, baseSets, headSets, benchmarksPath, benchmarks, {
        factor,
        useStats: flags.stats,
        onlyChanged: flags.onlyChanged ?? false,
      }),
    );
  } else {
    const text = formatCompareReport(report, { split: flags.split ?? false, onlyChanged: flags.onlyChanged ?? false });
    if (text !== '') print(text);
  }
  return 0;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

function parseCount(flag: string, text: string, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) {
    throw new ConfigError(`${flag}: expected an integer of at least ${min}, got ${JSON.stringify(text)}`, { reason: 'invalid-flags' });
  }
  return n;
}

function parseProbability(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || n >= 1)
    throw new ConfigError(`${flag}: expected a number between 0 and 1, got ${JSON.stringify(text)}`, { reason: 'invalid-flags' });
  return n;
}

function pairedOptions(flags: CompareFlags): PairedOptions {
  const raw: Record<string, number> = {};
  if (flags.minPairs !== undefined) raw['minPairs'] = parseCount('--min-pairs', flags.minPairs, 2);
  if (flags.alpha !== undefined) raw['alpha'] = parseProbability('--alpha', flags.alpha);
  if (flags.consistency !== undefined) raw['consistency'] = parseProbability('--consistency', flags.consistency);
  if (flags.safetyFactor !== undefined) raw['safetyFactor'] = parseFactor(flags.safetyFactor);
  const parsed = pairedOptionsSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => `paired verdict: ${i.path.join('.')}: ${i.message}`),
      { reason: 'invalid-flags' },
    );
  }
  return parsed.data;
}

function pairedRowJson(w: WorkloadVerdicts) {
  return {
    change: w.paired.change,
    reason: w.paired.reason,
    pairRatios: w.paired.pairRatios,
    normalizedRatios: w.paired.normalizedRatios,
    normalizedMedian: w.paired.normalizedMedian,
    usablePairs: w.paired.usablePairs,
    fasterPairs: w.paired.fasterPairs,
    slowerPairs: w.paired.slowerPairs,
    noise: w.paired.noise,
    pValue: w.paired.pValue,
    significant: w.paired.significant,
    mds: w.paired.mds,
    asvPValue: w.asv.pValue,
  };
}

function withPaired(
  json: ReturnType<typeof compareJson>,
  two: TwoVerdictReport,
  calibration: { first: ResultSet[]; second: ResultSet[] } | null,
) {
  const byName = new Map(two.workloads.map((w) => [w.name, w]));
  const p = two.paired;
  return {
    ...json,
    pooled: true,
    paired: {
      pairs: p.pairs,
      unpaired: p.unpaired,
      machineFactors: p.machineFactors,
      normalized: p.normalized,
      threshold: p.threshold,
      options: p.options,
      counts: p.counts,
      calibration: {
        ...p.calibration,
        files: calibration ? { first: calibration.first.map((s) => s.source), second: calibration.second.map((s) => s.source) } : null,
        asvPooled: two.asvOnCalibration,
      },
    },
    benchmarks: json.benchmarks.map((row) => {
      const w = byName.get(row.name);
      return { ...row, paired: w ? pairedRowJson(w) : null };
    }),
  };
}

type Status = 'ok' | 'failed' | 'skipped' | 'missing';

function statusOf(m: Measurement | undefined): Status {
  if (m === undefined) return 'missing';
  if (m.value === null) return 'failed';
  return Number.isNaN(m.value) ? 'skipped' : 'ok';
}

function finiteOrNull(v: number | null | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function rowJson(row: CompareRow, benchmarks: ReadonlyMap<string, BenchmarkInfo> | null) {
  return {
    name: row.name,
    key: row.key,
    environment: row.machineEnv,
    type: benchmarks?.get(row.key)?.type ?? null,
    unit: row.unit,
    mark: row.verdict.mark,
    change: row.verdict.change,
    before: finiteOrNull(row.before?.value),
    after: finiteOrNull(row.after?.value),
    beforeStatus: statusOf(row.before),
    afterStatus: statusOf(row.after),
    ratio: finiteOrNull(row.verdict.ratio),
    tilde: row.verdict.tilde,
  };
}

function compareJson(
  report: CompareReport,
  baseSets: readonly ResultSet[],
  headSets: readonly ResultSet[],
  benchmarksPath: string | null,
  benchmarks: ReadonlyMap<string, BenchmarkInfo> | null,
  options: { factor: number; useStats: boolean; onlyChanged: boolean },
) {
  const rows = options.onlyChanged ? report.rows.filter(isChanged) : report.rows;
  return {
    base: { commit: report.baseCommit, files: baseSets.map((s) => s.source) },
    head: { commit: report.headCommit, files: headSets.map((s) => s.source) },
    benchmarksFile: benchmarksPath,
    factor: options.factor,
    useStats: options.useStats,
    onlyChanged: options.onlyChanged,
    benchmarks: rows.map((r) => rowJson(r, benchmarks)),
  };
}
