import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filterConfig } from '../../stages/filter/config.js';
import { decideFilter } from '../../stages/filter/decide.js';
import { GitRepo } from '../helpers/git.js';
import { makePullRequest } from '../helpers/pull-request.js';

/**
 * The asv-config-at-base rule on real git trees: the config is read at the pull request's base
 * commit (not at the merge), from asv.conf.json or asv.conf.jsonc anywhere in the tree.
 */
describe('asv config at the base commit, from a real git repository', () => {
  const repo = new GitRepo();
  const sha: Record<string, string> = {};

  beforeAll(() => {
    sha.initial = repo.commit('initial', {
      'fastlib/__init__.py': '',
      'fastlib/core.py': 'def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n',
    });
    sha.perfWithoutAsv = repo.commit('PERF: use sum', { 'fastlib/core.py': 'def total(xs):\n    return sum(xs)\n' });
    sha.addAsv = repo.commit('Add asv benchmarks', {
      'asv.conf.json': '{\n  // asv config\n  "version": 1,\n  "project": "fastlib",\n  "benchmark_dir": "benchmarks",\n}\n',
      'benchmarks/bench_core.py': 'from fastlib.core import total\n\ndef time_total():\n    total(range(10000))\n',
    });
    sha.perfWithAsv = repo.commit('PERF: faster total for numpy input', {
      'fastlib/core.py': 'import numpy as np\n\ndef total(xs):\n    return np.sum(xs)\n',
    });
    sha.moveAsv = repo.commit('Move benchmarks to asv_bench', {
      'asv.conf.json': null,
      'benchmarks/bench_core.py': null,
      'asv_bench/asv.conf.jsonc':
        '{\n  "version": 1,\n  "project": "fastlib",\n  /* relative to this file */\n  "benchmark_dir": "benchmarks",\n}\n',
      'asv_bench/benchmarks/bench_core.py': 'from fastlib.core import total\n\ndef time_total():\n    total(range(10000))\n',
    });
    sha.perfNested = repo.commit('PERF: avoid a copy in total', {
      'fastlib/core.py': 'import numpy as np\n\ndef total(xs):\n    return np.asarray(xs).sum()\n',
    });
    sha.benchOnly = repo.commit('PERF: faster benchmark setup', {
      'asv_bench/benchmarks/bench_core.py': 'from fastlib.core import total\nXS = list(range(10000))\n\ndef time_total():\n    total(XS)\n',
    });
    sha.breakAsv = repo.commit('Edit asv config by hand', {
      'asv_bench/asv.conf.jsonc': '{\n  "version": 1,\n  "project": "fastlib"\n  "benchmark_dir": "benchmarks"\n}\n',
    });
    sha.perfAfterBreak = repo.commit('PERF: speed up total', {
      'fastlib/core.py': 'import numpy as np\n\ndef total(xs):\n    return np.add.reduce(np.asarray(xs))\n',
    });
  });
  afterAll(() => repo.remove());

  /** A pull request base..merge of this repository, filled from git as collect would. */
  function pr(base: string, merge: string, title: string) {
    const files = repo.filesBetween(base, merge);
    return makePullRequest({
      title,
      body: '',
      baseSha: base,
      mergeSha: merge,
      files,
      additions: files.reduce((n, f) => n + f.additions, 0),
      deletions: files.reduce((n, f) => n + f.deletions, 0),
      changedFiles: files.length,
      diff: repo.diff(base, merge),
      asvConfig: repo.asvConfigAt(base),
    });
  }

  const config = filterConfig.parse({});

  it('drops a pull request whose base commit has no asv config (even though later commits do)', () => {
    expect(repo.asvConfigAt(sha.initial!)).toBeNull();
    expect(repo.asvConfigAt(sha.perfWithAsv!)).not.toBeNull();
    const d = decideFilter(pr(sha.initial!, sha.perfWithoutAsv!, 'PERF: use sum'), 'h', config);
    expect(d.reason).toBe('no-asv-config');
    expect(d.detail).toContain(sha.initial!.slice(0, 12));
  });

  it('passes one whose base has asv.conf.json (comments and trailing commas parse as JSON5)', () => {
    const d = decideFilter(pr(sha.addAsv!, sha.perfWithAsv!, 'PERF: faster total for numpy input'), 'h', config);
    expect(d.status).toBe('done');
    expect(d.output.asvConfigPath).toBe('asv.conf.json');
    expect(d.output.benchmarkDir).toBe('benchmarks');
    expect(d.output.coreFiles).toEqual(['fastlib/core.py']);
    expect(d.output.diffBytes).toBeGreaterThan(0);
  });

  it('finds a nested asv.conf.jsonc and resolves its benchmark_dir relative to it', () => {
    const d = decideFilter(pr(sha.moveAsv!, sha.perfNested!, 'PERF: avoid a copy in total'), 'h', config);
    expect(d.status).toBe('done');
    expect(d.output.asvConfigPath).toBe('asv_bench/asv.conf.jsonc');
    expect(d.output.benchmarkDir).toBe('asv_bench/benchmarks');
  });

  it('drops a change to the benchmarks alone, whatever its title says', () => {
    const d = decideFilter(pr(sha.perfNested!, sha.benchOnly!, 'PERF: faster benchmark setup'), 'h', config);
    expect(d.reason).toBe('no-core-files');
  });

  it('drops one whose base has an asv config that does not parse, with its own reason', () => {
    const d = decideFilter(pr(sha.breakAsv!, sha.perfAfterBreak!, 'PERF: speed up total'), 'h', config);
    expect(d.reason).toBe('invalid-asv-config');
    expect(d.detail).toContain('asv_bench/asv.conf.jsonc');
  });
});
