import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBenchmarksFile } from '../../../pipeline/concepts/asv/index.js';
import { harness, removeSuite, standInBenchmarks, writeSuite } from './harness-fixture.js';
import { ASV_ONLY_SUITE, BROKEN_SUITE, CONFIG, PARITY_SUITE } from './suites.js';
import { RICH_DIR } from '../../concepts/asv/reference.js';

type Entry = Record<string, unknown>;
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeSuite));
function suite(files: Record<string, string>): string {
  const dir = writeSuite(files);
  dirs.push(dir);
  return dir;
}

async function discover(dir: string, ...args: string[]): Promise<Record<string, Entry>> {
  const r = await harness(dir, 'discover', ...args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, Entry>;
}

describe('discover: the same benchmarks as the stand-in asv (checked against real asv output)', () => {
  let mine: Record<string, Entry>;
  let theirs: Record<string, Entry>;
  beforeAll(async () => {
    const dir = suite(PARITY_SUITE);
    mine = await discover(dir);
    theirs = await standInBenchmarks(dir);
  });

  it('finds the same benchmark names: functions, methods, Time* methods, nested packages', () => {
    const names = (d: Record<string, Entry>) =>
      Object.keys(d)
        .filter((k) => k !== 'version')
        .sort();
    expect(names(mine)).toEqual(names(theirs));
    expect(names(mine)).toEqual([
      'bench_classes.Cached.time_sum',
      'bench_classes.Cached.track_size',
      'bench_classes.Suite.mem_data',
      'bench_classes.Suite.peakmem_data',
      'bench_classes.Suite.time_join',
      'bench_classes.Suite.track_len',
      'bench_funcs.time_params',
      'bench_funcs.time_plain',
      'bench_funcs.time_pretty',
      'bench_funcs.track_answer',
      'nested.deeper.bench_deep.TimeStyle.TimeUpper',
      'nested.deeper.bench_deep.TimeStyle.time_attrs',
      'nested.deeper.bench_deep.time_deep',
    ]);
    expect(mine['version']).toBe(2);
  });

  it('gives every benchmark the same params, param_names, type and unit', () => {
    for (const name of Object.keys(theirs).filter((k) => k !== 'version')) {
      for (const field of ['params', 'param_names', 'type', 'unit']) {
        expect(mine[name]![field], `${name}.${field}`).toEqual(theirs[name]![field]);
      }
    }
    expect(mine['bench_classes.Suite.time_join']!['params']).toEqual([
      ['1', '3'],
      ["'x'", "'yy'"],
      ['<benchmarks.bench_classes.Thing object>', 'None'],
    ]);
    expect(mine['bench_classes.Suite.time_join']!['param_names']).toEqual(['count', 'text', 'param3']);
    expect(mine['bench_funcs.track_answer']!['unit']).toBe('answers');
    expect(mine['bench_classes.Suite.mem_data']!['type']).toBe('memory');
    expect(mine['bench_classes.Suite.peakmem_data']!['unit']).toBe('bytes');
  });

  it("hashes the code as asv does: the function's source, methods inside their class, setups after", () => {
    const plain = 'def time_plain():\n    sum(range(50))';
    expect(mine['bench_funcs.time_plain']!['code']).toBe(plain);
    expect(mine['bench_funcs.time_plain']!['version']).toBe(sha256(plain));
    const join = [
      'class Suite:',
      '    def time_join(self, count, text, thing):',
      '        "".join(self.data)',
      '',
      '    def setup(self, count, text, thing):',
      '        self.data = [text] * count',
    ].join('\n');
    expect(mine['bench_classes.Suite.time_join']!['code']).toBe(join);
    expect(mine['bench_classes.Suite.time_join']!['version']).toBe(sha256(join));
    const cached = [
      'class Cached:',
      '    def time_sum(self, data):',
      '        sum(data)',
      '',
      '    def setup_cache(self):',
      '        return list(range(100))',
    ].join('\n');
    expect(mine['bench_classes.Cached.time_sum']!['version']).toBe(sha256(cached));
  });

  it('keeps an explicit version and pretty_name, and the setup_cache key and timeout only where set', () => {
    expect(mine['bench_funcs.time_pretty']!['version']).toBe('fixed-1');
    expect(mine['bench_funcs.time_pretty']!['pretty_name']).toBe('square root');
    // asv's key: the module relative to the suite and the line of setup_cache
    const line = PARITY_SUITE['benchmarks/bench_classes.py']!.split('\n').indexOf('    def setup_cache(self):') + 1;
    expect(mine['bench_classes.Cached.time_sum']!['setup_cache_key']).toBe(`bench_classes:${line}`);
    expect(mine['bench_classes.Cached.track_size']!['setup_cache_key']).toBe(`bench_classes:${line}`);
    expect(mine['bench_classes.Cached.time_sum']!['timeout']).toBe(30);
    expect(mine['bench_classes.Cached.time_sum']!['timeout']).toBe(theirs['bench_classes.Cached.time_sum']!['timeout']);
    expect('timeout' in mine['bench_funcs.time_plain']!).toBe(false);
    expect('pretty_name' in mine['bench_funcs.time_plain']!).toBe(false);
    expect('setup_cache_key' in mine['bench_funcs.time_plain']!).toBe(false);
  });

  it("writes a time benchmark's entry with exactly the keys real asv wrote for rich", () => {
    const real = JSON.parse(readFileSync(join(RICH_DIR, 'r4x4/ab/benchmarks.json'), 'utf8')) as Record<string, Entry>;
    const realKeys = Object.keys(real['benchmarks.TextSuite.time_split']!).sort();
    expect(Object.keys(mine['bench_funcs.time_plain']!).sort()).toEqual(realKeys);
    const defaults = { min_run_count: 2, number: 0, repeat: 0, rounds: 2, sample_time: 0.01, warmup_time: -1 };
    expect(mine['bench_funcs.time_plain']).toMatchObject(defaults);
    expect(mine['nested.deeper.bench_deep.TimeStyle.time_attrs']).toMatchObject({
      number: 3,
      repeat: 4,
      rounds: 1,
      sample_time: 0.002,
      warmup_time: 0,
    });
    expect(Object.keys(mine['bench_funcs.track_answer']!).sort()).toEqual([
      'code',
      'name',
      'param_names',
      'params',
      'type',
      'unit',
      'version',
    ]);
  });

  it('writes a file the project reads with --out, listing only matching benchmarks with --bench', async () => {
    const dir = suite(PARITY_SUITE);
    const r = await harness(dir, 'discover', '--bench', 'Suite\\.time_join\\(3', '--bench', 'track_answer', '--out', 'out/benchmarks.json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    const parsed = parseBenchmarksFile(readFileSync(join(dir, 'out/benchmarks.json'), 'utf8'), 'out/benchmarks.json');
    expect([...parsed.keys()].sort()).toEqual(['bench_classes.Suite.time_join', 'bench_funcs.track_answer']);
    expect(parsed.get('bench_funcs.track_answer')!.unit).toBe('answers');
  });
});

describe('discover: what only asv knows', () => {
  let mine: Record<string, Entry>;
  let stdout: string;
  let stderr: string;
  beforeAll(async () => {
    const r = await harness(suite(ASV_ONLY_SUITE), 'discover');
    expect(r.code, r.stderr).toBe(0);
    stdout = r.stdout;
    stderr = r.stderr;
    mine = JSON.parse(r.stdout) as Record<string, Entry>;
  });

  it('keeps stdout pure JSON when modules print at import (Python and C level go to stderr)', () => {
    expect(() => JSON.parse(stdout) as unknown).not.toThrow();
    expect(stderr).toContain('module output at import time');
    expect(stderr).toContain('C-level output at import time');
  });

  it('discovers timeraw_ benchmarks as time benchmarks with number 1', () => {
    expect(mine['bench_more.timeraw_import']).toMatchObject({ type: 'time', unit: 'seconds', number: 1 });
  });

  it('omits a tuple repeat as asv does (only str, int, float, list, dict, bool are written)', () => {
    expect('repeat' in mine['bench_more.time_tuple_repeat']!).toBe(false);
    expect(mine['bench_more.time_tuple_repeat']!['number']).toBe(0);
  });

  it('numbers duplicate parameter reprs as asv does', () => {
    expect(mine['bench_more.Dupes.time_x']!['params']).toEqual([
      ['1 (0)', '1 (1)', '<benchmarks.bench_more.Obj object> (0)', '<benchmarks.bench_more.Obj object> (1)'],
    ]);
  });
});

describe('discover: exit codes', () => {
  it('exits 2 naming the missing config file', async () => {
    const r = await harness(suite({ 'benchmarks/__init__.py': '' }), 'discover');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config file asv\.conf\.json not found.*--config/);
  });

  it('exits 3 naming the module that cannot be imported and the exception', async () => {
    const r = await harness(suite(BROKEN_SUITE), 'discover');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('Error importing benchmark module benchmarks.broken');
    expect(r.stderr).toContain("ModuleNotFoundError: No module named 'no_such_module_perfmine'");
    expect(r.stdout).toBe('');
  });

  it('exits 3 when the benchmark directory is not a package', async () => {
    const r = await harness(suite({ 'asv.conf.json': CONFIG, 'benchmarks/b.py': 'def time_x():\n    pass\n' }), 'discover');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('No __init__.py file');
  });

  it('exits 4 when the suite has no benchmark, or none matches --bench', async () => {
    const empty = await harness(
      suite({ 'asv.conf.json': CONFIG, 'benchmarks/__init__.py': '', 'benchmarks/util.py': 'def helper():\n    pass\n' }),
      'discover',
    );
    expect(empty.code).toBe(4);
    expect(empty.stderr).toContain('no benchmarks found');
    const unmatched = await harness(suite(PARITY_SUITE), 'discover', '--bench', 'nothing-like-this');
    expect(unmatched.code).toBe(4);
  });

  it('reads the config named by --config, resolving benchmark_dir against its directory', async () => {
    const dir = suite({
      'conf/asv.conf.json': '{"version": 1, "repo": "..", "benchmark_dir": "../suite"}',
      'suite/__init__.py': '',
      'suite/b.py': 'def time_x():\n    pass\n',
    });
    const r = await harness(dir, '--config', 'conf/asv.conf.json', 'discover');
    expect(r.code, r.stderr).toBe(0);
    expect(Object.keys(JSON.parse(r.stdout) as object)).toEqual(['b.time_x', 'version']);
  });
});
