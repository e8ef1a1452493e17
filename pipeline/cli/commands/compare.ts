import type { Command } from 'commander';
import {
  compareResultSets,
  findBenchmarksFile,
  formatCompareReport,
  isChanged,
  loadSide,
  readBenchmarksFile,
  type BenchmarkInfo,
  type CompareReport,
  type CompareRow,
  type Measurement,
  type ResultSet,
} from '../../../stages/validate/asv/index.js';
import { ConfigError, ItemError } from '../../errors.js';
import { print, printJson, type GlobalFlags } from '../session.js';

interface CompareFlags {
  readonly benchmarks?: string;
  readonly factor: string;
  readonly onlyChanged?: boolean;
  readonly split?: boolean;
  /** commander's `--no-stats` */
  readonly stats: boolean;
}

/** Registers `perfmine compare <base> <head>`: asv compare's table (or JSON) for two results files. */
export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description('compare two asv results files as `asv compare` does (same marks, ratios and table)')
    .argument('<base>', 'baseline results file (results/<machine>/<hash>-<env>.json)')
    .argument('<head>', 'patched results file')
    .option('--benchmarks <benchmarks.json>', 'benchmark units and types (default: benchmarks.json beside the results files or one directory up)')
    .option('--factor <F>', 'ratio that counts as a change', '1.1')
    .option('--only-changed', 'only rows marked -, +, ! or * (no titles)')
    .option('--split', 'one table per group: improved, unchanged, worse, not comparable')
    .option('--no-stats', 'decide on the factor alone, without the significance test')
    .addHelpText(
      'after',
      `
Marks: - improved, + worse, ! now fails, * now passes, x not comparable (benchmark changed),
blank unchanged; ~ before the ratio: beyond the factor but not statistically significant.
With --json: {"benchmarks": [{name, mark, change, before, after, ratio, tilde, ...}], ...}.`,
    )
    .action(async (base: string, head: string, flags: CompareFlags, command: Command) => {
      process.exitCode = await compareCommand(base, head, flags, command.optsWithGlobals<GlobalFlags>());
    });
}

function parseFactor(text: string): number {
  const factor = Number(text);
  if (text.trim() === '' || !Number.isFinite(factor) || factor <= 0) {
    throw new ConfigError(`--factor: expected a number greater than 0, got ${JSON.stringify(text)}`, { reason: 'invalid-flags', fix: 'e.g. --factor 1.1' });
  }
  return factor;
}

/** Input problems stop the command with exit 2: the operator must point at readable files. */
async function readInput<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (error instanceof ItemError) {
      throw new ConfigError(error.message, { reason: 'unreadable-input', fix: 'pass asv results files (results/<machine>/<hash>-<env>.json) and, optionally, --benchmarks benchmarks.json', cause: error });
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
  const baseSets = await readInput(() => loadSide(base));
  const headSets = await readInput(() => loadSide(head));
  const benchmarksPath = flags.benchmarks ?? (await findBenchmarksFile([base, head]));
  const benchmarks = benchmarksPath === null ? null : await readInput(() => readBenchmarksFile(benchmarksPath));

  const report = compareResultSets(baseSets, headSets, { factor, useStats: flags.stats, benchmarks });
  if (globals.json) {
    printJson(compareJson(report, baseSets, headSets, benchmarksPath, benchmarks, { factor, useStats: flags.stats, onlyChanged: flags.onlyChanged ?? false }));
  } else {
    const text = formatCompareReport(report, { split: flags.split ?? false, onlyChanged: flags.onlyChanged ?? false });
    if (text !== '') print(text);
  }
  return 0;
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
