import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  computeStats,
  parseBenchmarksFile,
  parseResultsFile,
  parseTolerantJson,
  resultSetOf,
  type ResultsFile,
} from '../../../pipeline/concepts/asv/index.js';
import { NETWORKX_BASE, NETWORKX_DIR, RICH_DIR } from '../../concepts/asv/reference.js';
import { harness, removeSuite, ROOT, runProgram, writeSuite, type Outcome } from './harness-fixture.js';
import { RUN_SUITE } from './suites.js';
import { BIN } from '../../helpers/cli.js';

/** `run`: an asv-compatible results file, checked against real asv files and the project's reader. */

const truncate = (x: number) => Number(x.toExponential(4));
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

let dir: string;
let shaA: string;
let shaB: string;
let runA: Outcome;
let runB: Outcome;
let raw: Record<string, unknown>;
let file: ResultsFile;

function resultsPath(sha: string): string {
  const name = readdirSync(join(dir, 'results/testbox')).find((n) => n.startsWith(sha.slice(0, 8)));
  if (!name) throw new Error(`no results file for ${sha}`);
  return join(dir, 'results/testbox', name);
}

beforeAll(async () => {
  dir = writeSuite(RUN_SUITE);
  git(dir, 'init', '-q');
  git(
    dir,
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@example.com',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'A',
    '--date',
    '2024-05-01T12:00:00Z',
  );
  shaA = git(dir, 'rev-parse', 'HEAD');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'B');
  shaB = git(dir, 'rev-parse', 'HEAD');
  runA = await harness(dir, 'run', '--out-dir', 'results', '--commit', shaA.slice(0, 10), '--machine', 'testbox');
  runB = await harness(
    dir,
    'run',
    '--out-dir',
    'results',
    '--commit',
    shaB,
    '--machine',
    'testbox',
    '-a',
    'rounds=1',
    '-a',
    'repeat=3',
    '-a',
    'number=5',
    '-a',
    'warmup_time=0',
  );
  const text = readFileSync(resultsPath(shaA), 'utf8');
  raw = parseTolerantJson(text) as Record<string, unknown>;
  file = parseResultsFile(text, resultsPath(shaA));
}, 120_000);
afterAll(() => removeSuite(dir));

const realBase = () => parseTolerantJson(readFileSync(NETWORKX_BASE, 'utf8')) as Record<string, unknown>;
const row = (name: string) => (raw['results'] as Record<string, unknown[]>)[name]!;
const ALL = [
  'bench_run.Cached.track_file_in_cwd',
  'bench_run.Skip.time_never',
  'bench_run.time_broken',
  'bench_run.time_pow',
  'bench_run.time_sum',
  'bench_run.track_value',
];

describe('run: a results file as asv writes it', () => {
  it('exits 2 because a benchmark failed, as asv run does', () => {
    expect(runA.code, runA.stderr).toBe(2);
    expect(runA.stderr).toContain('ValueError: broken on purpose');
  });

  it('writes the file asv names <sha8>-existing-py_<python path>.json with the full hash and the commit date', () => {
    const name = resultsPath(shaA).split('/').pop()!;
    expect(name).toMatch(new RegExp(`^${shaA.slice(0, 8)}-existing-py_[^/]*python[^/]*\\.json$`));
    expect(raw['commit_hash']).toBe(shaA);
    expect(raw['date']).toBe(Date.parse('2024-05-01T12:00:00Z'));
    expect(raw['env_name']).toBe(name.slice(9, -5));
  });

  it('has the top-level fields of a real asv file, in its order, with the matrix as requirements', () => {
    expect(Object.keys(raw)).toEqual(Object.keys(realBase()));
    expect(raw['result_columns']).toEqual(realBase()['result_columns']);
    expect(raw['requirements']).toEqual({ numpy: '', setuptools: '59.2.0' });
    const params = raw['params'] as Record<string, string>;
    expect(Object.keys(params)).toEqual(['arch', 'cpu', 'machine', 'num_cpu', 'os', 'ram', 'python', 'numpy', 'setuptools']);
    expect(params['machine']).toBe('testbox');
    expect(params['python']).toBe(raw['python']);
    expect(raw['env_vars']).toEqual({});
    expect(Object.keys(raw['durations'] as object)).toContain('<build>');
    expect(raw['version']).toBe(2);
  });

  it('writes machine.json with the keys of a real one, and benchmarks.json listing every benchmark', () => {
    const machine = JSON.parse(readFileSync(join(dir, 'results/testbox/machine.json'), 'utf8')) as object;
    const realMachine = JSON.parse(readFileSync(join(NETWORKX_DIR, 'machine.json'), 'utf8')) as object;
    expect(Object.keys(machine)).toEqual(Object.keys(realMachine));
    const benchmarks = parseBenchmarksFile(readFileSync(join(dir, 'results/benchmarks.json'), 'utf8'), 'benchmarks.json');
    expect([...benchmarks.keys()].sort()).toEqual(ALL);
  });

  it('stores timed rows like real asv: 12 entries (trailing profile dropped), 2 rounds x 5 samples, stats as asv computes them', () => {
    const real = (realBase()['results'] as Record<string, unknown[]>)['benchmark_algorithms.AlgorithmBenchmarks.time_pagerank']!;
    const sum = row('bench_run.time_sum');
    expect(sum).toHaveLength(real.length);
    const [result, params, version, startedAt, duration, ciA, ciB, q25, q75, number, repeat, samples] = sum as [
      number[],
      unknown[],
      string,
      number,
      number,
      number[],
      number[],
      number[],
      number[],
      number[],
      number[],
      number[][],
    ];
    expect(params).toEqual([]);
    expect(version).toMatch(/^[0-9a-f]{64}$/);
    expect(Number.isInteger(startedAt)).toBe(true);
    expect(duration).toBe(truncate(duration));
    expect(samples[0]).toHaveLength(10);
    expect(repeat).toEqual([10]);
    expect(Number.isInteger(number[0]) && number[0]! >= 1).toBe(true);
    const stats = computeStats(samples[0]!, number[0]!)!;
    expect(result).toEqual([stats.result]);
    expect([ciA[0], ciB[0], q25[0], q75[0]]).toEqual(
      [stats.stats.ciLower, stats.stats.ciUpper, stats.stats.q25, stats.stats.q75].map(truncate),
    );
  });

  it('stores parameterized results over the cartesian product with params as repr strings', () => {
    const pow = file.benchmarks.find((b) => b.key === 'bench_run.time_pow')!;
    expect(pow.params).toEqual([['10', '100']]);
    expect(pow.values).toHaveLength(2);
    expect(pow.samples.map((s) => s!.length)).toEqual([10, 10]);
    expect(resultSetOf(file).workloads.map((w) => w.name)).toContain('bench_run.time_pow(100)');
  });

  it('stores a track value in a short row, a failure as null and a skip as NaN', () => {
    expect(row('bench_run.track_value')).toHaveLength(5);
    expect(row('bench_run.track_value')[0]).toEqual([7]);
    expect(row('bench_run.time_broken')[0]).toBeNull();
    expect(row('bench_run.Skip.time_never')[0]).toEqual([Number.NaN]);
    const skip = file.benchmarks.find((b) => b.key === 'bench_run.Skip.time_never')!;
    expect(Number.isNaN(skip.values[0])).toBe(true);
  });

  it('runs setup_cache once in its own directory, the benchmarks using it in that directory, and records its duration', () => {
    expect(row('bench_run.Cached.track_file_in_cwd')[0]).toEqual([55]);
    const key = Object.keys(raw['durations'] as object).find((k) => k.startsWith('<setup_cache bench_run:'));
    expect(key).toBeDefined();
  });

  it('applies -a like asv: one round of 3 samples of number 5', () => {
    expect(runB.code).toBe(2);
    const b = parseResultsFile(readFileSync(resultsPath(shaB), 'utf8'), 'B');
    const sum = b.benchmarks.find((x) => x.key === 'bench_run.time_sum')!;
    expect(sum.samples[0]).toHaveLength(3);
    expect(sum.stats[0]).toMatchObject({ number: 5, repeat: 3 });
  });

  it('gives files that perfmine compare reads and compares, workload by workload', async () => {
    const r = await runProgram(process.execPath, [BIN, 'compare', resultsPath(shaA), resultsPath(shaB), '--json'], ROOT, {
      ...process.env,
      NO_COLOR: '1',
    });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { benchmarks: { name: string; before: number | null; after: number | null }[] };
    const names = out.benchmarks.map((b) => b.name).sort();
    expect(names).toEqual([
      'bench_run.Cached.track_file_in_cwd',
      'bench_run.Skip.time_never',
      'bench_run.time_broken',
      'bench_run.time_pow(10)',
      'bench_run.time_pow(100)',
      'bench_run.time_sum',
      'bench_run.track_value',
    ]);
    const sum = out.benchmarks.find((b) => b.name === 'bench_run.time_sum')!;
    expect(sum.before).toBeGreaterThan(0);
    expect(sum.after).toBeGreaterThan(0);
  });

  it('keeps the rows of benchmarks it did not run from an existing file, as asv does', async () => {
    const again = await harness(dir, 'run', '--out-dir', 'results', '--commit', shaB, '--machine', 'testbox', '--bench', 'track_value');
    expect(again.code, again.stderr).toBe(0);
    const b = parseResultsFile(readFileSync(resultsPath(shaB), 'utf8'), 'B');
    expect(b.benchmarks.map((x) => x.key).sort()).toEqual(ALL);
  });
});

describe('run: the real files it is measured against', () => {
  it('the rich reference has 32 rows of 12 entries, as ours', () => {
    const rich = parseTolerantJson(readFileSync(join(RICH_DIR, 'r4x4/ab/349042fd-existing-py_usr_bin_python3.json'), 'utf8')) as {
      results: Record<string, unknown[]>;
    };
    expect(Object.values(rich.results).every((r) => r.length === 12)).toBe(true);
  });
});
