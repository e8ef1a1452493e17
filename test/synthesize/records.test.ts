import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BuildScripts, summarizeAttempts } from '../../cache/build-scripts.js';
import { openStore } from '../../cache/store.js';
import { commitReport, formatStats } from '../../pipeline/cli/commands/cache.js';
import { splitTag } from '../../pipeline/services/docker.js';
import { currentOwner, formatOwner, ownerIsGone, parseOwner } from '../../pipeline/services/owner.js';
import { agentInputs, tailOf } from '../../stages/synthesize/agent-inputs.js';
import { listTree } from '../../stages/synthesize/agent-tools.js';
import { classifyFailure } from '../../pipeline/services/environments/failure.js';
import { extractFacts } from '../../stages/synthesize/repo-facts.js';
import { scriptHash } from '../../pipeline/services/environments/script-check.js';
import { newAttempt } from './harness.js';
import {
  benchmarkDirOf,
  categorizeChanged,
  readVerifyRun,
  tamperedPaths,
  TAMPER_MARKER,
  verifyCommands,
} from '../../pipeline/services/environments/verification.js';

const attempt = newAttempt;

describe('the build-script store (migration 0005)', () => {
  it('records attempts, finds the cached script and the verified scripts of a repository', () => {
    const db = openStore(':memory:');
    const store = new BuildScripts(db);
    const sha1 = '1'.repeat(40);
    const sha2 = '2'.repeat(40);
    store.record(attempt({ sha: sha1 }));
    const v1 = store.record(
      attempt({
        sha: sha1,
        outcome: 'verified',
        failingStep: null,
        failureKind: null,
        failure: null,
        imageTag: 'img:1',
        script: 'echo v1\n',
        scriptHash: scriptHash('echo v1'),
      }),
    );
    store.record(
      attempt({
        sha: sha2,
        outcome: 'verified',
        failingStep: null,
        failure: null,
        imageTag: 'img:2',
        source: 'neighbour',
        script: 'echo v1\n',
        scriptHash: scriptHash('echo v1'),
      }),
    );
    store.record(attempt({ repo: 'other/r', sha: sha1, outcome: 'verified' }));
    expect(store.latestVerified('o/r', sha1)?.id).toBe(v1);
    expect(store.latestVerified('o/r', '3'.repeat(40))).toBeUndefined();
    expect(store.verifiedScripts('o/r').map((v) => v.sha)).toEqual([sha1, sha2]);
    expect(store.forCommit('o/r', sha1).map((a) => a.outcome)).toEqual(['failed', 'verified']);
    expect(store.list({ repo: 'o/r', sha: '1111' })).toHaveLength(2);
    expect(store.get(v1)?.steps).toEqual([{ step: 'build', ok: false, exitCode: 1, timedOut: false, durationMs: 5 }]);
    const [stats] = store.stats({ repo: 'o/r' });
    expect(stats).toMatchObject({
      commits: 2,
      verifiedCommits: 2,
      successRate: 1,
      reuseRate: 0.5,
      attempts: 3,
      verifiedBySource: { template: 1, neighbour: 1 },
    });
    db.close();
  });

  it('summarizes success, reuse (cache or neighbour) and LLM use per repository', () => {
    const row = (sha: string, source: 'cache' | 'neighbour' | 'template' | 'agent', outcome: 'verified' | 'failed', llm = 0) => ({
      repo: 'o/r',
      sha,
      source,
      outcome,
      llm_calls: llm,
      prompt_tokens: llm * 100,
      completion_tokens: llm * 10,
      cost_usd: 0,
      duration_ms: 1000,
    });
    const [s] = summarizeAttempts([
      row('a', 'template', 'verified'),
      row('b', 'neighbour', 'failed'),
      row('b', 'agent', 'verified', 1),
      row('c', 'neighbour', 'verified'),
      row('d', 'agent', 'failed', 1),
    ]);
    expect(s).toMatchObject({
      commits: 4,
      verifiedCommits: 3,
      successRate: 0.75,
      reuseRate: 1 / 3,
      llmCalls: 2,
      promptTokens: 200,
      completionTokens: 20,
      buildMs: 5000,
    });
    expect(formatStats([s!])).toMatch(
      /^repository\s+commits\s+verified\s+success\s+reuse\s+attempts\s+LLM calls\s+tokens\no\/r\s+4\s+3\s+75%\s+33%\s+5\s+2\s+220$/,
    );
  });

  it('cache show: the verified script, the last failure and the rebuild spec', () => {
    const db = openStore(':memory:');
    const store = new BuildScripts(db);
    store.record(attempt({ failure: 'build/missing-header: fatal error: x.h', source: 'neighbour' }));
    store.record(
      attempt({
        outcome: 'verified',
        failingStep: null,
        failure: null,
        source: 'agent',
        imageTag: 'perfmine/env-o-r:aaaa',
        script: 'echo good\n',
      }),
    );
    const report = commitReport(store.forCommit('o/r', 'a'.repeat(40)));
    expect(report).toMatchObject({
      status: 'verified',
      imageTag: 'perfmine/env-o-r:aaaa',
      verified: { source: 'agent', script: 'echo good\n' },
      lastFailure: { source: 'neighbour', failure: 'build/missing-header: fatal error: x.h', stderrTail: 'err' },
      rebuild: {
        baseImage: 'base',
        repoImage: 'repo-img',
        cloneSource: 'git:/x',
        sha: 'a'.repeat(40),
        script: 'echo good\n',
        command: `perfmine cache rebuild o/r@${'a'.repeat(40)}`,
      },
    });
    expect(commitReport([])).toMatchObject({ status: 'never built', rebuild: null });
    db.close();
  });
});

describe('verification commands and the tamper check', () => {
  it('runs the history check, tamper, import, asv and pytest in order, with asv in its config directory', () => {
    const cmds = verifyCommands({
      sha: 'abc',
      importName: 'pkg',
      asvConfigPath: 'asv_bench/asv.conf.json',
      asvDiscover: 'check',
      patched: false,
    });
    expect(cmds.map((c) => c.step)).toEqual(['history', 'tamper', 'import', 'asv', 'pytest']);
    expect(cmds[2]).toMatchObject({ workingDir: '/' });
    expect(cmds[3]).toMatchObject({ workingDir: '/repo/asv_bench', cmd: ['bash', '-c', 'asv check --python=same'] });
    expect(cmds[4]!.okExitCodes).toEqual([0, 5]);
    expect(cmds[4]!.cmd[2]).toBe('"${PERFMINE_PYTHON:-python3}" -m pytest --collect-only -q -p no:cacheprovider');
    // a repository's own pytest arguments, each quoted for the shell
    const own = verifyCommands({
      sha: 'abc',
      importName: 'pkg',
      asvConfigPath: null,
      asvDiscover: 'harness',
      patched: false,
      pytestArgs: ['-o', 'addopts=', "-k not 'slow'"],
    });
    expect(own.at(-1)!.cmd[2]).toBe(
      `"\${PERFMINE_PYTHON:-python3}" -m pytest --collect-only -q -p no:cacheprovider '-o' 'addopts=' '-k not '\\''slow'\\'''`,
    );
    const jsonc = verifyCommands({
      sha: 'abc',
      importName: null,
      asvConfigPath: 'asv.conf.jsonc',
      asvDiscover: 'just-discover',
      patched: true,
    });
    expect(jsonc[3]!.cmd[2]).toMatch(/asv run --python=same --bench just-discover --machine perfmine-verify --config 'asv\.conf\.jsonc'$/);
    expect(jsonc[2]!.cmd[2]).toMatch(/import name is unknown/);
    // The expected tree is the commit's with the patch applied in a scratch index; without a patch, the commit's.
    expect(jsonc[1]!.cmd[2]).toContain('GIT_INDEX_FILE=/tmp/expected.index git apply --cached --whitespace=nowarn "$PERFMINE_PATCH"');
    expect(jsonc[1]!.env).toEqual({ PERFMINE_SHA: 'abc', PERFMINE_PATCH: '/perfmine-verify/patch.diff' });
    expect(cmds[1]!.env).toEqual({ PERFMINE_SHA: 'abc' });
  });

  it("reads each step's result from the one verification container's files, up to the step it did not finish", () => {
    const steps = verifyCommands({
      sha: 'abc',
      importName: 'pkg',
      asvConfigPath: 'asv.conf.json',
      asvDiscover: 'harness',
      patched: false,
    }).map((command) => ({ command, limitMs: 2_000 }));
    const files = (entries: Record<string, string>) => new Map(Object.entries(entries).map(([k, v]) => [`run/${k}`, Buffer.from(v)]));
    // a step ended by timeout's signal at its limit timed out; the same exit code before the limit is the step's own
    const runs = readVerifyRun(
      files({
        '0.status': '0 120 3 0',
        '0.out': 'ok\n',
        '0.err': '',
        '1.status': '124 2004 0 4',
        '1.err': 'boom',
        '2.status': '124 15 0 0',
      }),
      steps,
      100,
    );
    expect(runs[0]).toEqual({ exitCode: 0, timedOut: false, durationMs: 120, stdout: 'ok\n', stderr: '' });
    expect(runs[1]).toMatchObject({ exitCode: null, timedOut: true, durationMs: 2004, stderr: 'boom' });
    expect(runs[2]).toMatchObject({ exitCode: 124, timedOut: false });
    // no status: the container ended before the step did
    expect(runs[3]).toBeNull();
    // the output kept is the tail; what was cut before it is counted, as the log tails of a container say
    const [long] = readVerifyRun(files({ '0.status': '1 5 1000 0', '0.out': 'x'.repeat(40) }), steps, 10);
    expect(long!.stdout).toBe(`[... 990 earlier bytes cut]\n${'x'.repeat(10)}`);
    // counted in bytes, as the container counts them: 10 two-byte characters shown of the 40 bytes kept
    const [accented] = readVerifyRun(files({ '0.status': '1 5 1000 0', '0.out': 'é'.repeat(20) }), steps, 10);
    expect(accented!.stdout).toBe(`[... 980 earlier bytes cut]\n${'é'.repeat(10)}`);
  });

  it('reads the changed paths and says what each is', () => {
    expect(tamperedPaths(`noise\n${TAMPER_MARKER}\nbenchmarks/b.py\ntests/test_x.py\n`)).toEqual(['benchmarks/b.py', 'tests/test_x.py']);
    expect(tamperedPaths('tracked files as expected')).toEqual([]);
    const where = {
      asvConfigPath: 'asv_bench/asv.conf.json',
      benchmarkDir: benchmarkDirOf('asv_bench/asv.conf.json', '{ // c\n "benchmark_dir": "benchmarks",}'),
      testDirs: ['tests'],
    };
    expect(where.benchmarkDir).toBe('asv_bench/benchmarks');
    expect(
      categorizeChanged(
        ['asv_bench/benchmarks/b.py', 'asv_bench/asv.conf.json', 'tests/test_a.py', 'pkg/test_inner.py', 'pkg/core.py'],
        where,
      ).map((c) => c.kind),
    ).toEqual(['benchmark', 'asv-config', 'test', 'test', 'other']);
    expect(benchmarkDirOf('asv.conf.json', null)).toBe('benchmarks');
    expect(benchmarkDirOf(null, null)).toBeNull();
  });

  it("reads benchmark_dir with the config's parser: asv's template comments out a benchmark_dir before the real one", () => {
    // the shape of asv's own template (asv quickstart): every setting documented in `//` comments,
    // the defaults commented out, a trailing comma
    const template = [
      '{',
      '    // The version of the config file format.  Do not change, unless',
      '    // you know what you are doing.',
      '    "version": 1,',
      '    // The name of the project being benchmarked',
      '    "project": "pkg",',
      '    // The directory (relative to the current directory) that benchmarks are',
      '    // stored in.  If not provided, defaults to "benchmarks"',
      '    // "benchmark_dir": "benchmarks",',
      '    // The directory (relative to the current directory) to cache the Python',
      '    // environments in.  If not provided, defaults to "env"',
      '    "env_dir": ".asv/env",',
      '    "benchmark_dir": "perf/suite",',
      '}',
    ].join('\n');
    expect(benchmarkDirOf('asv_bench/asv.conf.json', template)).toBe('asv_bench/perf/suite');
    // only the commented-out one: asv's default
    expect(benchmarkDirOf('asv.conf.json', template.replace('    "benchmark_dir": "perf/suite",\n', ''))).toBe('benchmarks');
    expect(benchmarkDirOf('asv.conf.json', '{"benchmark_dir": "./bench/"}')).toBe('bench');
    // a config that cannot be read: asv's default
    expect(benchmarkDirOf('asv.conf.json', '{ not json')).toBe('benchmarks');
  });
});

describe('agent inputs and tools', () => {
  it('renders the failure, tails and history for the prompt', () => {
    const failure = classifyFailure([
      {
        step: 'build',
        ok: false,
        exitCode: 1,
        timedOut: false,
        stdout: '',
        stderr: "ModuleNotFoundError: No module named 'cython'",
        durationMs: 1,
      },
    ]);
    const inputs = agentInputs({
      repo: 'o/r',
      sha: 'abc',
      pythonVersion: '3.11',
      offline: true,
      buildNetwork: 'bridge',
      facts: extractFacts(['setup.py', 'pkg/__init__.py'], new Map([['setup.py', 'setup(name="pkg")']])),
      lastScript: 'echo x\n',
      lastFailure: failure,
      stdoutTail: 'o'.repeat(20_000),
      stderrTail: "ModuleNotFoundError: No module named 'cython'",
      history: [{ source: 'template', detail: 'editable-offline', failure }],
    });
    expect(inputs.failure_stage).toBe('build');
    expect(inputs.failure_summary).toBe("build/missing-module: ModuleNotFoundError: No module named 'cython'");
    expect(inputs.stdout_tail).toMatch(/^\[\.\.\. 12000 earlier characters cut\]\no{8000}$/);
    expect(inputs.attempt_history).toBe(
      "1. template (editable-offline): build/missing-module: ModuleNotFoundError: No module named 'cython'",
    );
    expect(inputs.network).toMatch(/PyPI is not/);
    expect(inputs.repo_facts).toMatch(/import name: pkg/);
    expect(tailOf('abc', 10)).toBe('abc');
  });

  it('lists a tree, collapsing large directories', () => {
    expect(listTree(['a.py', 'pkg/x.py', 'pkg/y.py'], 'pkg')).toBe('pkg/x.py\npkg/y.py');
    expect(listTree(['a.py'], 'nope')).toBe('no tracked files under nope/');
    const many = Array.from({ length: 500 }, (_, i) => `big/d${i % 3}/f${i}.py`);
    expect(listTree(many, 'big').split('\n')).toEqual([
      '500 files under big; its entries (directories with their file counts):',
      'd0/ (167 files)',
      'd1/ (167 files)',
      'd2/ (166 files)',
    ]);
  });
});

describe('owners of containers and images', () => {
  it('round-trips and judges an owner gone only when its process provably is', () => {
    const me = currentOwner();
    expect(parseOwner(formatOwner(me))).toEqual(me);
    expect(ownerIsGone(formatOwner(me))).toBe(false);
    const child = spawnSync('true');
    expect(ownerIsGone(formatOwner({ ...me, pid: child.pid!, startTime: '1' }))).toBe(true);
    expect(ownerIsGone(formatOwner({ ...me, host: 'elsewhere', pid: child.pid! }))).toBe(false);
    expect(ownerIsGone(formatOwner({ ...me, startTime: '1' }))).toBe(true);
    expect(ownerIsGone('garbage')).toBe(false);
  });

  it('splits image references', () => {
    expect(splitTag('perfmine/env-o-r:abc-attempt-1')).toEqual({ repo: 'perfmine/env-o-r', tag: 'abc-attempt-1' });
    expect(splitTag('localhost:5000/x')).toEqual({ repo: 'localhost:5000/x', tag: 'latest' });
  });
});
