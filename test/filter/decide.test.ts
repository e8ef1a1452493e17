import { describe, expect, it } from 'vitest';
import { filterConfig } from '../../stages/filter/config.js';
import { decideFilter, FILTER_REASONS } from '../../stages/filter/decide.js';
import { parseAsvConfig } from '../../pipeline/concepts/asv-config.js';
import { benchmarkDirGlob, globToRegExp, pathMatcher } from '../../pipeline/concepts/path-matcher.js';
import { countTokens, withinTokens, type TextSource } from '../../stages/filter/tokens.js';
import { DEFAULT_NON_FUNCTIONAL_PATHS } from '../../pipeline/concepts/path-matcher.js';
import { ASV_CONF, file, makePullRequest } from '../helpers/pull-request.js';

const config = filterConfig.parse({});

describe('non-functional paths', () => {
  const matcher = pathMatcher(DEFAULT_NON_FUNCTIONAL_PATHS);
  it.each([
    ['pandas/tests/frame/test_groupby.py', true],
    ['tests/test_core.py', true],
    ['test_speed.py', true],
    ['pkg/conftest.py', true],
    ['doc/source/whatsnew/v2.2.0.rst', true],
    ['docs/index.md', true],
    ['examples/plot_speed.py', true],
    ['asv_bench/benchmarks/groupby.py', true],
    ['benchmarks/bench_core.py', true],
    ['.github/workflows/ci.yml', true],
    ['pyproject.toml', true],
    ['requirements-dev.txt', true],
    ['ci/requirements/py311.txt', true],
    ['build/lib/fastlib/core.py', true],
    ['fastlib.egg-info/PKG-INFO', true],
    ['README.md', true],
    ['fastlib/core.py', false],
    ['fastlib/_ext/sum.pyx', false],
    ['src/fastlib/kernels.c', false],
    ['setup.py', false],
    ['fastlib/testing_utils_fast.py', false],
    ['CMakeLists.txt', false],
  ])('%s non-functional: %s', (path, expected) => {
    expect(matcher.nonFunctional(path) !== null).toBe(expected);
  });

  it('globs: ** spans directories, * stays in a segment, a bare name matches at any depth', () => {
    expect(globToRegExp('**/tests/**').test('a/b/tests/c/d.py')).toBe(true);
    expect(globToRegExp('**/tests/**').test('tests/d.py')).toBe(true);
    expect(globToRegExp('.github/**').test('x/.github/a.yml')).toBe(false);
    expect(globToRegExp('*.md').test('a/b/c.md')).toBe(true);
    expect(globToRegExp('docs/*.md').test('docs/a/b.md')).toBe(false);
    expect(globToRegExp('requirements*.txt').test('requirements-test.txt')).toBe(true);
  });

  it('benchmark_dir of the asv config is resolved relative to the config file', () => {
    expect(benchmarkDirGlob('asv_bench/asv.conf.json', 'benchmarks')).toBe('asv_bench/benchmarks/**');
    expect(benchmarkDirGlob('asv.conf.json', './perf')).toBe('perf/**');
    expect(benchmarkDirGlob('tools/asv.conf.json', '../bench_suite')).toBe('bench_suite/**');
    expect(benchmarkDirGlob('asv.conf.json', '..')).toBeNull();
  });
});

describe('asv config parsing (JSON5)', () => {
  it('accepts comments and trailing commas', () => {
    const parsed = parseAsvConfig(ASV_CONF);
    expect(parsed).toMatchObject({ ok: true, config: { project: 'fastlib', benchmark_dir: 'benchmarks' } });
  });
  it('rejects text that is not JSON5, or not an object, or with wrongly typed fields', () => {
    expect(parseAsvConfig('{ "version": 1, ')).toMatchObject({ ok: false });
    expect(parseAsvConfig('[1, 2]')).toEqual({ ok: false, error: 'not a JSON object' });
    expect(parseAsvConfig('{"benchmark_dir": 3}')).toMatchObject({ ok: false, error: expect.stringContaining('benchmark_dir') });
  });
});

describe('decideFilter', () => {
  it('passes a merged performance pull request and records what classify needs', () => {
    const d = decideFilter(makePullRequest(), 'hash-1', config);
    expect(d.status).toBe('done');
    expect(d.reason).toBeNull();
    expect(d.output).toMatchObject({
      contentHash: 'hash-1',
      messageVerdict: 'positive',
      coreFiles: ['fastlib/core.py'],
      asvConfigPath: 'asv.conf.json',
      benchmarkDir: 'benchmarks',
      tokenizer: 'o200k_base',
    });
    expect(d.output.positiveCues.map((c) => c.cue)).toEqual(expect.arrayContaining(['performance', 'speed', 'slow', 'vectorize']));
    // A diff of fewer bytes than the token budget is within it without tokenizing.
    expect(d.output.diffBytes).toBe(Buffer.byteLength(makePullRequest().diff));
    expect(d.output.diffTokens).toBeNull();
  });

  const cases: { name: string; reason: (typeof FILTER_REASONS)[number]; pr: Parameters<typeof makePullRequest>[0]; cfg?: object }[] = [
    { name: 'not merged', reason: 'not-merged', pr: { mergeSha: '' } },
    { name: 'merged into a maintenance branch', reason: 'not-default-branch', pr: { mergedIntoDefault: false, baseRef: '2.2.x' } },
    { name: 'no asv config at the base commit', reason: 'no-asv-config', pr: { asvConfig: null } },
    {
      name: 'an asv config that does not parse',
      reason: 'invalid-asv-config',
      pr: { asvConfig: { path: 'asv.conf.json', text: '{ "version": 1,, }' } },
    },
    { name: 'only tests and docs', reason: 'no-core-files', pr: { files: [file('fastlib/tests/test_core.py'), file('doc/perf.rst')] } },
    {
      name: 'only the asv benchmark_dir of a nested config',
      reason: 'no-core-files',
      pr: {
        files: [file('bench_suite/groupby.py')],
        asvConfig: { path: 'tools/asv.conf.json', text: '{"benchmark_dir": "../bench_suite"}' },
      },
    },
    {
      name: 'a docs title without a performance cue',
      reason: 'negative-message',
      pr: { title: 'DOC: fix typo in groupby docstring', body: '' },
    },
    { name: 'too many files', reason: 'too-many-files', pr: { changedFiles: 3 }, cfg: { maxFiles: 2 } },
    { name: 'too many lines', reason: 'too-many-lines', pr: { additions: 60_000, deletions: 30_000 } },
    {
      name: 'a diff over the token budget',
      reason: 'diff-too-large',
      pr: { diff: 'x = compute(y)\n'.repeat(400) },
      cfg: { maxDiffTokens: 1000 },
    },
  ];
  it.each(cases)('drops $name as $reason', ({ reason, pr, cfg }) => {
    const d = decideFilter(makePullRequest(pr), 'h', filterConfig.parse(cfg ?? {}));
    expect(d.status).toBe('dropped');
    expect(d.reason).toBe(reason);
    expect(d.detail.length).toBeGreaterThan(10);
    expect(FILTER_REASONS).toContain(d.reason);
    expect(d.reason).toMatch(/^[a-z]+(-[a-z]+)*$/);
  });

  it('counts a rename out of the package as a core change', () => {
    const d = decideFilter(
      makePullRequest({ files: [file('tests/helpers.py', 0, 0, { status: 'renamed', previousPath: 'fastlib/helpers.py' })] }),
      'h',
      config,
    );
    expect(d.status).toBe('done');
  });

  it('lets an ambiguous message through to the LLM, and a mixed one too', () => {
    expect(decideFilter(makePullRequest({ title: 'Rework the block manager', body: '' }), 'h', config).output.messageVerdict).toBe(
      'ambiguous',
    );
    const mixed = decideFilter(makePullRequest({ title: 'DOC: note why groupby is faster now', body: '' }), 'h', config);
    expect(mixed.status).toBe('done');
    expect(mixed.output.messageVerdict).toBe('mixed');
  });

  it('measures the diff only when every cheaper rule passed, and tokenizes only past the byte bound', () => {
    let calls = 0;
    const measure = (t: string | TextSource, limit: number) => {
      calls += 1;
      return withinTokens(t, limit);
    };
    decideFilter(makePullRequest({ asvConfig: null }), 'h', config, measure);
    expect(calls).toBe(0);
    decideFilter(makePullRequest(), 'h', config, measure);
    expect(calls).toBe(1);
    const diff = makePullRequest().diff;
    const exact = countTokens(diff);
    // Over the byte bound: counted exactly, and decided on the count.
    const small = decideFilter(makePullRequest(), 'h', { ...config, maxDiffTokens: exact + 1 });
    expect(small.output).toMatchObject({ diffTokens: exact, diffBytes: Buffer.byteLength(diff) });
    expect(small.status).toBe('done');
    const tiny = decideFilter(makePullRequest(), 'h', { ...config, maxDiffTokens: exact - 1 });
    expect(tiny).toMatchObject({ status: 'dropped', reason: 'diff-too-large', output: { diffTokens: exact } });
    // A diff known only by its size is read only when the size cannot settle it.
    let reads = 0;
    const lazy = (_limit: number) => ({ ...makePullRequest(), diff: { bytes: Buffer.byteLength(diff), text: () => (reads++, diff) } });
    expect(decideFilter(lazy(100_000), 'h', config).status).toBe('done');
    expect(reads).toBe(0);
    expect(decideFilter(lazy(0), 'h', { ...config, maxDiffTokens: exact - 1 }).reason).toBe('diff-too-large');
    expect(reads).toBe(1);
    // The bound is sound: a token never covers less than one byte.
    for (const t of [diff, 'héllo wörld ✓ 数据', '    '.repeat(500)]) expect(countTokens(t)).toBeLessThanOrEqual(Buffer.byteLength(t));
    const text = 'def f(x):\n    return np.add.reduceat(x, idx)  # <|endoftext|>\n';
    expect(countTokens(text, 'cl100k_base')).toBeGreaterThan(5);
    expect(countTokens(text, 'o200k_base')).toBeGreaterThan(5);
    expect(countTokens('')).toBe(0);
  });
});
