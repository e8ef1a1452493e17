import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isProtectedPath, measuredPatch } from '../../pipeline/concepts/measured-patch.js';

/**
 * What of a patch validate and score build and measure: the benchmarks, the asv config, the tests
 * and pytest's config files stay the base's, as the task's verifier keeps them. The patch is a
 * real `git diff` of a generated repository, and what is kept applies there with `git apply`.
 */
const dir = mkdtempSync(join(tmpdir(), 'measured-patch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' });
const write = (path: string, text: string) => {
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), text);
};
const layout = { configPath: 'asv.conf.json', benchmarkDir: 'benchmarks' };

describe('the measured part of a patch', () => {
  it('drops the changes to benchmarks, the asv config, tests and pytest.ini, and keeps the package, byte for byte', () => {
    git('init', '-q', '-b', 'main');
    const files: Record<string, string> = {
      'asv.conf.json': '{"version": 1}\n',
      'benchmarks/bench_core.py': 'def time_fib():\n    fib(25)\n',
      'pkg/core.py': 'def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n',
      'pkg/tests/test_core.py': 'def test_fib():\n    assert fib(10) == 55\n',
      'test_top.py': 'def test_x():\n    pass\n',
      'pytest.ini': '[pytest]\n',
      'pkg/latest.py': 'LATEST = 1\n',
      'tools/contest.py': 'X = 1\n',
    };
    for (const [path, text] of Object.entries(files)) write(path, text);
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'base');
    // the expert's change: the package, and a benchmark made cheaper, a test rewritten, the asv config and pytest.ini
    write('pkg/core.py', 'def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n');
    write('benchmarks/bench_core.py', 'def time_fib():\n    fib(2)\n');
    write('pkg/tests/test_core.py', 'def test_fib():\n    pass\n');
    write('test_top.py', 'def test_x():\n    assert True\n');
    write('pytest.ini', '[pytest]\naddopts = -k nothing\n');
    write('asv.conf.json', '{"version": 1, "benchmark_dir": "benchmarks"}\n');
    write('pkg/latest.py', 'LATEST = 2\n');
    write('tools/contest.py', 'X = 2\n');
    git('mv', 'pkg/latest.py', 'pkg/newest.py');
    write('benchmarks/bench_new.py', 'def time_new():\n    pass\n');
    git('add', '-A');
    const patch = git('diff', '--cached', '-M');

    const kept = measuredPatch(patch, layout);
    expect([...kept.dropped].sort()).toEqual([
      'asv.conf.json',
      'benchmarks/bench_core.py',
      'benchmarks/bench_new.py',
      'pkg/tests/test_core.py',
      'pytest.ini',
      'test_top.py',
    ]);
    // what is kept applies at the base and changes the package only
    git('reset', '-q', '--hard');
    writeFileSync(join(dir, 'kept.patch'), kept.patch);
    git('apply', 'kept.patch');
    rmSync(join(dir, 'kept.patch'));
    expect(git('status', '--porcelain').split('\n').filter(Boolean).sort()).toEqual([
      ' D pkg/latest.py',
      ' M pkg/core.py',
      ' M tools/contest.py',
      '?? pkg/newest.py',
    ]);
    expect(readFileSync(join(dir, 'benchmarks/bench_core.py'), 'utf8')).toBe(files['benchmarks/bench_core.py']);
    // nothing protected: the same string
    expect(measuredPatch(kept.patch, layout)).toEqual({ patch: kept.patch, dropped: [] });
  });

  it('names what is protected: the benchmark directory as configured, test files and directories at any depth', () => {
    const nested = { configPath: 'asv_bench/asv.conf.json', benchmarkDir: 'asv_bench/benchmarks/' };
    for (const path of [
      'asv_bench/asv.conf.json',
      'asv_bench/benchmarks/a.py',
      'x/test/data.csv',
      'a/b/conftest.py',
      'a/x_test.py',
      'tox.ini',
    ])
      expect(isProtectedPath(path, nested), path).toBe(true);
    for (const path of [
      'asv.conf.json',
      'benchmarks/a.py',
      'pkg/testing.py',
      'pkg/contest.py',
      'latest/x.py',
      'docs/tox.ini',
      'pyproject.toml',
    ])
      expect(isProtectedPath(path, nested), path).toBe(false);
  });
});
