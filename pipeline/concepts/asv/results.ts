import { z } from 'zod';
import { asvFileError, asvSchemaError, asvSyntaxError } from './asv-file-error.js';
import { parseTolerantJson, TolerantJsonError } from './tolerant-json.js';

/**
 * asv's results files (`results/<machine>/<hash>-<env>.json`, schema version 2): one commit, one
 * environment, every benchmark as a row aligned with `result_columns`. asv drops trailing nulls
 * from each row, stores parameterized results as lists over the cartesian product of the
 * parameters, writes `null` for a failure and `NaN` for a skip.
 */

/** The schema version this reader understands (asv's `Results.api_version`). */
export const RESULTS_SCHEMA_VERSION = 2;

/** Every column asv writes, in its order. */
export const RESULT_COLUMNS = [
  'result',
  'params',
  'version',
  'started_at',
  'duration',
  'stats_ci_99_a',
  'stats_ci_99_b',
  'stats_q_25',
  'stats_q_75',
  'stats_number',
  'stats_repeat',
  'samples',
  'profile',
] as const;
export type ResultColumn = (typeof RESULT_COLUMNS)[number];

const REQUIRED_COLUMNS: readonly ResultColumn[] = ['result', 'params'];

/** asv's per-combination statistics (`compute_stats`), each field present only when stored. */
export interface ResultStats {
  /** 99% confidence interval of the median, lower and upper bound. */
  readonly ciLower?: number;
  readonly ciUpper?: number;
  readonly q25?: number;
  readonly q75?: number;
  /** Iterations per sample. */
  readonly number?: number;
  /** Number of samples. */
  readonly repeat?: number;
}

/** One benchmark's row, with trailing nulls restored and lists expanded per parameter combination. */
export interface BenchmarkResult {
  /** The benchmark name, e.g. `bench_core.Core.time_add`. */
  readonly key: string;
  /** Parameter values as Python repr strings, one list per parameter; `[]` when unparameterized. */
  readonly params: readonly (readonly string[])[];
  /** One value per combination (cartesian order): a number, `null` (failed) or NaN (skipped). */
  readonly values: readonly (number | null)[];
  /** One entry per combination; `null` where no statistic was stored. */
  readonly stats: readonly (ResultStats | null)[];
  /** Raw samples per combination; `null` where none were recorded. */
  readonly samples: readonly (readonly number[] | null)[];
  /** Benchmark version (hash of its code): results of different versions are not comparable. */
  readonly version: string | null;
  /** JavaScript timestamp (ms) when the benchmark started. */
  readonly startedAt: number | null;
  /** Seconds the benchmark took, all combinations together. */
  readonly duration: number | null;
}

/** A parsed results file. */
export interface ResultsFile {
  /** Where it came from (a path), used in messages. */
  readonly source: string;
  readonly commitHash: string;
  readonly envName: string;
  /** `params.machine`, the machine name asv keys results by. */
  readonly machine: string | null;
  readonly date: number | null;
  readonly python: string;
  /** Rows in file order. */
  readonly benchmarks: readonly BenchmarkResult[];
  /** Durations of non-benchmark steps such as `<build>` or `<setup_cache …>`. */
  readonly durations: Readonly<Record<string, number | null>>;
}

/** Any number, NaN and ±Infinity included (zod's `number()` rejects them). */
export const anyNumber = z.custom<number>((v) => typeof v === 'number', { message: 'expected a number' });
const numberOrNull = anyNumber.nullable();

const fileSchema = z.looseObject({
  commit_hash: z.string(),
  env_name: z.string(),
  date: numberOrNull,
  params: z.record(z.string(), z.unknown()),
  python: z.string(),
  requirements: z.record(z.string(), z.unknown()),
  env_vars: z.record(z.string(), z.unknown()).optional(),
  result_columns: z.array(z.string()),
  results: z.record(z.string(), z.array(z.unknown())),
  durations: z.record(z.string(), numberOrNull).optional(),
});

const perCombination = z.array(numberOrNull).nullable();
const columnSchemas: Record<ResultColumn, z.ZodType> = {
  result: perCombination,
  params: z.array(z.array(z.string())),
  version: z.string().nullable(),
  started_at: numberOrNull,
  duration: numberOrNull,
  stats_ci_99_a: perCombination,
  stats_ci_99_b: perCombination,
  stats_q_25: perCombination,
  stats_q_75: perCombination,
  stats_number: perCombination,
  stats_repeat: perCombination,
  samples: z.array(z.array(anyNumber).nullable()).nullable(),
  profile: z.string().nullable(),
};

const STATS_FIELDS: Record<string, keyof ResultStats> = {
  stats_ci_99_a: 'ciLower',
  stats_ci_99_b: 'ciUpper',
  stats_q_25: 'q25',
  stats_q_75: 'q75',
  stats_number: 'number',
  stats_repeat: 'repeat',
};

/** Number of parameter combinations (1 for an unparameterized benchmark). */
export function combinationCount(params: readonly (readonly string[])[]): number {
  return params.reduce((n, p) => n * p.length, 1);
}

/** Checks the top-level `version` field before anything else, as asv's `load_json` does. */
export function checkSchemaVersion(data: unknown, source: string, expected: number): void {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw asvFileError(source, [], 'expected a JSON object');
  if (!('version' in data)) throw asvFileError(source, ['version'], `missing (asv writes "version": ${expected})`);
  const version = (data as { version: unknown }).version;
  if (version !== expected) {
    throw asvFileError(
      source,
      ['version'],
      `unknown schema version ${JSON.stringify(version)} (this reader understands version ${expected})`,
    );
  }
}

/** Parses text that may contain NaN / Infinity, turning syntax errors into messages naming the file. */
export function parseAsvJson(text: string, source: string): unknown {
  try {
    return parseTolerantJson(text);
  } catch (error) {
    if (error instanceof TolerantJsonError) throw asvSyntaxError(source, error);
    throw error;
  }
}

/**
 * Parses an asv results file (schema version 2). Throws an ItemError naming the file and the
 * field for an unknown schema version, an unknown or missing column, a row longer than the
 * columns, a value of the wrong type, or a list whose length does not match the parameters.
 */
export function parseResultsFile(text: string, source: string): ResultsFile {
  const data = parseAsvJson(text, source);
  checkSchemaVersion(data, source, RESULTS_SCHEMA_VERSION);
  const parsed = fileSchema.safeParse(data);
  if (!parsed.success) throw asvSchemaError(source, [], parsed.error);
  const file = parsed.data;

  const columns = checkColumns(file.result_columns, source);
  const benchmarks: BenchmarkResult[] = [];
  for (const [key, row] of Object.entries(file.results)) {
    benchmarks.push(parseRow(key, row, columns, source));
  }
  const machine = file.params['machine'];
  return {
    source,
    commitHash: file.commit_hash,
    envName: file.env_name,
    machine: typeof machine === 'string' ? machine : null,
    date: file.date,
    python: file.python,
    benchmarks,
    durations: file.durations ?? {},
  };
}

function checkColumns(columns: readonly string[], source: string): ResultColumn[] {
  const seen = new Set<string>();
  columns.forEach((column, i) => {
    if (!(RESULT_COLUMNS as readonly string[]).includes(column)) {
      throw asvFileError(source, ['result_columns', i], `unknown column ${JSON.stringify(column)} (known: ${RESULT_COLUMNS.join(', ')})`);
    }
    if (seen.has(column)) throw asvFileError(source, ['result_columns', i], `duplicate column ${JSON.stringify(column)}`);
    seen.add(column);
  });
  for (const required of REQUIRED_COLUMNS) {
    if (!seen.has(required)) throw asvFileError(source, ['result_columns'], `missing column ${JSON.stringify(required)}`);
  }
  return columns as ResultColumn[];
}

function parseRow(key: string, row: readonly unknown[], columns: readonly ResultColumn[], source: string): BenchmarkResult {
  const at = ['results', key];
  if (row.length > columns.length) {
    throw asvFileError(source, at, `row has ${row.length} entries but result_columns names ${columns.length}`);
  }
  const cells = new Map<ResultColumn, unknown>();
  columns.forEach((column, i) => {
    // asv drops trailing nulls: restore them
    const value = i < row.length ? row[i] : null;
    const checked = columnSchemas[column].safeParse(value);
    if (!checked.success) throw asvSchemaError(source, [...at, i], checked.error, `column ${column}`);
    cells.set(column, checked.data);
  });

  // the params column is required and its schema rejects null: asv writes [] when unparameterized
  const params = cells.get('params') as string[][];
  const n = combinationCount(params);

  const perCombo = <T>(column: ResultColumn, list: readonly T[] | null): readonly (T | null)[] => {
    if (list === null) return new Array<T | null>(n).fill(null);
    if (list.length !== n) {
      throw asvFileError(
        source,
        [...at, columns.indexOf(column)],
        `column ${column}: ${list.length} entries but the parameters give ${n} combination${n === 1 ? '' : 's'}`,
      );
    }
    return list;
  };

  const values = perCombo('result', (cells.get('result') as (number | null)[] | null | undefined) ?? null);
  const samples = perCombo('samples', (cells.get('samples') as (number[] | null)[] | null | undefined) ?? null);
  const stats: (Record<string, number> | null)[] = new Array(n).fill(null);
  for (const [column, field] of Object.entries(STATS_FIELDS)) {
    const list = cells.get(column as ResultColumn) as (number | null)[] | null | undefined;
    if (list === undefined || list === null) continue;
    perCombo(column as ResultColumn, list).forEach((v, j) => {
      if (v === null) return;
      const entry = stats[j] ?? {};
      entry[field] = v;
      stats[j] = entry;
    });
  }

  return {
    key,
    params,
    values,
    stats: stats as (ResultStats | null)[],
    samples,
    version: (cells.get('version') as string | null | undefined) ?? null,
    startedAt: (cells.get('started_at') as number | null | undefined) ?? null,
    duration: (cells.get('duration') as number | null | undefined) ?? null,
  };
}
