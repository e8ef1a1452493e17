/**
 * Structural checks of asv's files (results schema version 2, benchmarks.json, machine.json),
 * applied alike to real asv output and to the stand-in's. Returns the problems found (empty:
 * the file has asv's shape). Test helper only: the full parser is pipeline/concepts/asv/.
 */
type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNumber = (v: Json) => typeof v === 'number';
const product = (params: Json[]) => params.reduce<number>((n, p) => n * (Array.isArray(p) ? p.length : 0), 1);

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
];

export interface ResultsFacts {
  readonly topKeys: string[];
  readonly rowLengths: number[];
  /** Counts of cells that are null (a failure) or NaN (a skip) in result columns. */
  readonly failedCells: number;
  readonly skippedCells: number;
  readonly parameterized: number;
}

export function checkResultsShape(data: Json): { problems: string[]; facts: ResultsFacts } {
  const problems: string[] = [];
  const facts: ResultsFacts = { topKeys: [], rowLengths: [], failedCells: 0, skippedCells: 0, parameterized: 0 };
  if (!isObject(data)) return { problems: ['not an object'], facts };
  const mutable = facts as { -readonly [K in keyof ResultsFacts]: ResultsFacts[K] };
  mutable.topKeys = Object.keys(data).sort();
  if (data.version !== 2) problems.push(`version ${String(data.version)}, expected 2`);
  for (const k of ['commit_hash', 'env_name', 'python']) if (typeof data[k] !== 'string') problems.push(`${k} is not a string`);
  if (!isNumber(data.date)) problems.push('date is not a number');
  for (const k of ['params', 'requirements', 'env_vars', 'durations', 'results'])
    if (!isObject(data[k])) problems.push(`${k} is not an object`);
  if (JSON.stringify(data.result_columns) !== JSON.stringify(RESULT_COLUMNS)) problems.push('result_columns differ from asv 0.6');
  for (const [name, row] of Object.entries(isObject(data.results) ? data.results : {})) {
    if (!Array.isArray(row)) {
      problems.push(`${name}: row is not a list`);
      continue;
    }
    mutable.rowLengths.push(row.length);
    if (row.length < 2 || row.length > RESULT_COLUMNS.length) problems.push(`${name}: ${row.length} columns`);
    if (row.length > 0 && row[row.length - 1] === null) problems.push(`${name}: trailing null not dropped`);
    const params = row[1];
    if (!Array.isArray(params) || !params.every((p) => Array.isArray(p) && p.every((x) => typeof x === 'string'))) {
      problems.push(`${name}: params is not a list of lists of repr strings`);
      continue;
    }
    if (params.length > 0) mutable.parameterized += 1;
    const n = product(params);
    const result = row[0];
    if (result !== null && !(Array.isArray(result) && result.length === n && result.every((v) => v === null || isNumber(v)))) {
      problems.push(`${name}: result is not null or a list of ${n} numbers/nulls`);
    }
    if (Array.isArray(result)) {
      mutable.failedCells += result.filter((v) => v === null).length;
      mutable.skippedCells += result.filter((v) => typeof v === 'number' && Number.isNaN(v)).length;
    }
    if (row.length > 2 && !(typeof row[2] === 'string' && /^[0-9a-f]{64}$/.test(row[2]))) problems.push(`${name}: version is not a sha256`);
    if (row.length > 3 && !Number.isInteger(row[3])) problems.push(`${name}: started_at is not an integer (ms)`);
    if (row.length > 4 && !isNumber(row[4])) problems.push(`${name}: duration is not a number`);
    for (let c = 5; c <= 10 && c < row.length; c += 1) {
      const col = row[c];
      if (col !== null && !(Array.isArray(col) && col.length === n && col.every((v) => v === null || isNumber(v))))
        problems.push(`${name}: ${RESULT_COLUMNS[c]} is not null or ${n} numbers`);
    }
    if (row.length > 11) {
      const samples = row[11];
      if (
        samples !== null &&
        !(Array.isArray(samples) && samples.length === n && samples.every((s) => s === null || (Array.isArray(s) && s.every(isNumber))))
      ) {
        problems.push(`${name}: samples is not null or ${n} lists of numbers`);
      }
      // Samples and stats agree: stats_repeat counts the samples of each combination.
      const repeat = row[10];
      if (Array.isArray(samples) && Array.isArray(repeat)) {
        samples.forEach((s, i) => {
          if (Array.isArray(s) && repeat[i] !== s.length)
            problems.push(`${name}[${i}]: stats_repeat ${String(repeat[i])} but ${s.length} samples`);
        });
      }
    }
  }
  return { problems, facts };
}

const TYPE_UNITS: Record<string, string | null> = { time: 'seconds', memory: 'bytes', peakmemory: 'bytes', track: null };

export function checkBenchmarksShape(data: Json): { problems: string[]; keysByType: Record<string, string[]> } {
  const problems: string[] = [];
  const keysByType: Record<string, string[]> = {};
  if (!isObject(data)) return { problems: ['not an object'], keysByType };
  if (data.version !== 2) problems.push('version is not 2');
  for (const [name, b] of Object.entries(data)) {
    if (name === 'version') continue;
    if (!isObject(b)) {
      problems.push(`${name}: not an object`);
      continue;
    }
    const type = String(b.type);
    if (!(type in TYPE_UNITS)) problems.push(`${name}: unknown type ${type}`);
    const unit = TYPE_UNITS[type];
    if (unit && b.unit !== unit) problems.push(`${name}: unit ${String(b.unit)}`);
    if (b.name !== name) problems.push(`${name}: name field differs`);
    if (!Array.isArray(b.params) || !Array.isArray(b.param_names) || b.params.length !== b.param_names.length)
      problems.push(`${name}: params / param_names`);
    if (typeof b.version !== 'string' || typeof b.code !== 'string') problems.push(`${name}: version / code`);
    const keys = Object.keys(b)
      .filter((k) => k !== 'timeout')
      .sort();
    const known = keysByType[type];
    if (!known) keysByType[type] = keys;
    else if (JSON.stringify(known) !== JSON.stringify(keys)) problems.push(`${name}: keys differ from other ${type} benchmarks`);
  }
  return { problems, keysByType };
}
