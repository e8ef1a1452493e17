import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ItemError } from '../../../pipeline/errors.js';
import { parseBenchmarksFile, parseResultsFile, RESULT_COLUMNS, unrollResults } from '../../../pipeline/concepts/asv/index.js';
import { NETWORKX_BASE, NETWORKX_DIR, readReference, RICH_DIR } from './reference.js';

function jsonFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return jsonFiles(path);
    return entry.endsWith('.json') && entry !== 'machine.json' ? [path] : [];
  });
}

/**
 * A minimal valid results file; tests break one thing at a time. The default row is
 * `[[0.5,0.25],[["1","2"]],"v1"]` (compact JSON, so tests can rewrite its text).
 */
function resultsText(overrides: Record<string, unknown> = {}, rows?: Record<string, unknown>): string {
  const doc = {
    commit_hash: 'abcdef0123456789',
    env_name: 'existing-py',
    date: 1,
    params: { machine: 'lab' },
    python: '3.11',
    requirements: {},
    env_vars: {},
    result_columns: [...RESULT_COLUMNS],
    results: rows ?? { 'mod.Suite.time_x': [[0.5, 0.25], [['1', '2']], 'v1'] },
    durations: {},
    version: 2,
    ...overrides,
  };
  return JSON.stringify(doc);
}

function rejection(text: string, source = 'results/lab/abcdef01-existing-py.json'): string {
  try {
    parseResultsFile(text, source);
  } catch (error) {
    expect(error).toBeInstanceOf(ItemError);
    return (error as Error).message;
  }
  throw new Error('expected the file to be rejected');
}

describe('results files: the real asv output', () => {
  it('parses every networkx and rich-3399 results file and benchmarks.json without error', () => {
    const files = [...jsonFiles(NETWORKX_DIR), ...jsonFiles(RICH_DIR)];
    const results = files.filter((f) => !f.endsWith('benchmarks.json'));
    const benchmarks = files.filter((f) => f.endsWith('benchmarks.json'));
    expect(results).toHaveLength(2 + 8);
    expect(benchmarks).toHaveLength(1 + 6);
    for (const f of results) {
      const parsed = parseResultsFile(readReference(f), f);
      expect(parsed.benchmarks.length, f).toBeGreaterThan(0);
      for (const w of unrollResults(parsed)) {
        expect(typeof w.value === 'number' || w.value === null, `${f} ${w.name}`).toBe(true);
      }
    }
    for (const f of benchmarks) expect(parseBenchmarksFile(readReference(f), f).size).toBeGreaterThan(0);
  });

  it('restores trailing nulls and unrolls parameters in cartesian order (networkx baseline)', () => {
    const file = parseResultsFile(readReference(NETWORKX_BASE), NETWORKX_BASE);
    expect(file.commitHash).toBe('aab0380830b6f21653bc1f88184e7ad4d1017888');
    expect(file.machine).toBe('asvlab');
    expect(file.benchmarks).toHaveLength(10);
    const workloads = unrollResults(file);
    expect(workloads).toHaveLength(28);
    const first = workloads[0]!;
    expect(first.name).toBe("benchmark_algorithms.AlgorithmBenchmarks.time_average_clustering('Erdos Renyi (100, 0.1)')");
    expect(first.value).toBe(0.0014558729499981383);
    expect(first.samples).toHaveLength(10);
    expect(first.stats).toEqual({ ciLower: 0.00086868, ciUpper: 0.001695, q25: 0.00096406, q75: 0.001647, number: 10, repeat: 10 });
    const unparameterized = workloads.find((w) => w.key.endsWith('time_single_source_all_shortest_paths'))!;
    expect(unparameterized.name).toBe('benchmark_many_components.ManyComponentsBenchmark.time_single_source_all_shortest_paths');
    expect(unparameterized.paramValues).toEqual([]);
  });

  it('reads the r4x4 files with 80 samples per commit', () => {
    const path = `${RICH_DIR}r4x4/ab/349042fd-existing-py_usr_bin_python3.json`;
    const workloads = unrollResults(parseResultsFile(readReference(path), path));
    expect(workloads).toHaveLength(32);
    for (const w of workloads) expect(w.samples).toHaveLength(80);
  });

  it('takes units and types from benchmarks.json', () => {
    const path = `${NETWORKX_DIR}benchmarks.json`;
    const benchmarks = parseBenchmarksFile(readReference(path), path);
    expect(benchmarks.size).toBe(36);
    const b = benchmarks.get('benchmark_algorithms.AlgorithmBenchmarks.time_average_clustering')!;
    expect(b).toMatchObject({ type: 'time', unit: 'seconds', paramNames: ['graph'] });
    expect(b.params[0]).toHaveLength(3);
  });
});

describe('results files: values and tokens', () => {
  it('accepts the bare NaN / Infinity / -Infinity tokens: NaN is a skip, null a failure', () => {
    const text = resultsText().replace(
      '[[0.5,0.25],[["1","2"]],"v1"]',
      '[[NaN, null], [["1", "2"]], "v1", 1, 2.5, [-Infinity, null], [Infinity, null]]',
    );
    expect(text).toContain('[NaN, null]');
    const file = parseResultsFile(text, 'r.json');
    const [a, b] = unrollResults(file);
    expect(a!.name).toBe('mod.Suite.time_x(1)');
    expect(Number.isNaN(a!.value)).toBe(true);
    expect(b!.value).toBeNull();
    expect(a!.stats).toEqual({ ciLower: Number.NEGATIVE_INFINITY, ciUpper: Number.POSITIVE_INFINITY });
    expect(b!.stats).toBeNull();
  });

  it('keeps a parameter value "NaN" inside a string as a string', () => {
    const text = resultsText({}, { 'm.time_f': [[1.0, 2.0], [["'NaN'", "'Infinity'"]]] });
    expect(unrollResults(parseResultsFile(text, 'r.json')).map((w) => w.name)).toEqual(["m.time_f('NaN')", "m.time_f('Infinity')"]);
  });

  it('unrolls several parameters with the last varying fastest', () => {
    const text = resultsText(
      {},
      {
        'm.time_f': [
          [1, 2, 3, 4, 5, 6],
          [
            ['1', '2'],
            ["'a'", "'b'", "'c'"],
          ],
        ],
      },
    );
    expect(unrollResults(parseResultsFile(text, 'r.json')).map((w) => [w.name, w.value])).toEqual([
      ["m.time_f(1, 'a')", 1],
      ["m.time_f(1, 'b')", 2],
      ["m.time_f(1, 'c')", 3],
      ["m.time_f(2, 'a')", 4],
      ["m.time_f(2, 'b')", 5],
      ["m.time_f(2, 'c')", 6],
    ]);
  });

  it('treats a null result row as all combinations failed', () => {
    const text = resultsText({}, { 'm.time_f': [null, [['1', '2']]] });
    expect(unrollResults(parseResultsFile(text, 'r.json')).map((w) => w.value)).toEqual([null, null]);
  });
});

describe('results files: malformed input names the file and the field', () => {
  const source = 'results/lab/abcdef01-existing-py.json';

  it('rejects an unknown schema version', () => {
    const message = rejection(resultsText({ version: 3 }));
    expect(message).toContain(source);
    expect(message).toContain('version: unknown schema version 3');
  });

  it('rejects a file without a version', () => {
    const text = resultsText().replace(',"version":2', '');
    expect(rejection(text)).toMatch(/abcdef01-existing-py\.json: version: missing/);
  });

  it('rejects an unknown column', () => {
    const columns = [...RESULT_COLUMNS.slice(0, 3), 'stats_mean'];
    expect(rejection(resultsText({ result_columns: columns }))).toContain(`${source}: result_columns[3]: unknown column "stats_mean"`);
  });

  it('rejects a missing required column', () => {
    const message = rejection(resultsText({ result_columns: ['result', 'version'] }, { 'm.time_f': [[1], 'v'] }));
    expect(message).toContain(`${source}: result_columns: missing column "params"`);
  });

  it('rejects a missing top-level field', () => {
    const text = resultsText({ result_columns: undefined });
    expect(rejection(text)).toContain(`${source}: result_columns:`);
  });

  it('rejects a row longer than result_columns', () => {
    const message = rejection(resultsText({ result_columns: ['result', 'params'] }, { 'm.time_f': [[1], [], 'v1'] }));
    expect(message).toContain(`${source}: results["m.time_f"]: row has 3 entries but result_columns names 2`);
  });

  it('rejects a result list that does not match the parameter combinations', () => {
    const message = rejection(resultsText({}, { 'm.time_f': [[1, 2, 3], [['1', '2']]] }));
    expect(message).toContain(`${source}: results["m.time_f"][0]: column result: 3 entries but the parameters give 2 combinations`);
  });

  it('rejects a value of the wrong type', () => {
    const message = rejection(resultsText({}, { 'm.time_f': [[1, 'fast'], [['1', '2']]] }));
    expect(message).toContain(`${source}: results["m.time_f"][0][1]: column result: expected a number`);
  });

  it('rejects bad bare tokens with the field they stood in', () => {
    const nan = resultsText().replace('[0.5,0.25]', '[0.5, nan]');
    expect(rejection(nan)).toContain(`${source}: results["mod.Suite.time_x"][0][1]: unexpected token 'nan'`);
    const negNaN = resultsText().replace('[0.5,0.25]', '[-NaN, 0.25]');
    expect(rejection(negNaN)).toContain(`${source}: results["mod.Suite.time_x"][0][0]: unexpected token '-NaN'`);
    const inf = resultsText().replace('"date":1', '"date":inf');
    expect(inf).toContain('"date":inf');
    expect(rejection(inf)).toMatch(/: date: unexpected token 'inf' .*\(line 1, column \d+\)/);
  });

  it('rejects truncated JSON', () => {
    const text = resultsText();
    expect(rejection(text.slice(0, text.length - 10))).toMatch(/abcdef01-existing-py\.json: .*(line 1, column \d+)/);
  });

  it('rejects an unknown benchmarks.json version and malformed entries, naming the file and field', () => {
    expect(() => parseBenchmarksFile('{"version": 1}', 'b/benchmarks.json')).toThrow(
      'b/benchmarks.json: version: unknown schema version 1',
    );
    expect(() => parseBenchmarksFile('{"version": 2, "m.time_f": {"name": "m.time_f"}}', 'b/benchmarks.json')).toThrow(
      /b\/benchmarks\.json: \["m\.time_f"\]\.type: /,
    );
  });
});
