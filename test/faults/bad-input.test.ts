import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPullRequest } from '../../cache/pull-requests.js';
import { openStore } from '../../cache/store.js';
import type { PullRequest } from '../../pipeline/concepts/records/pull-request.js';
import { FakeGitHub, type FakeFile, type FileContent } from '../fakes/github-server.js';
import { GitHistoryBuilder, type GitHistory } from '../fixtures/git-history.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/harness.js';
import { runToEnd } from './kill.js';

const ASV_JSON5 = `// asv config as real projects write it: comments, trailing commas, single quotes
{
    "version": 1,
    "project": 'fastlib',   /* single-quoted */
    "repo": ".",
    // a benchmark directory that is not one of the default non-functional paths
    "benchmark_dir": "perf_suite",
    "environment_type": "virtualenv",
    "matrix": {
        "numpy": [],
    },
}
`;
const LATIN1_BEFORE = Buffer.from('# -*- coding: latin-1 -*-\nNAME = "caf\xe9"\nSIGN = "\xa7"\n', 'latin1');
const LATIN1_AFTER = Buffer.from('# -*- coding: latin-1 -*-\nNAME = "caf\xe9 cr\xe8me"\nSIGN = "\xa7\xb6"\n', 'latin1');
const BIN_BEFORE = new Uint8Array([0, 1, 2, 3, 255, 254, 0, 7, 8, 9]);
const BIN_AFTER = new Uint8Array([0, 1, 2, 3, 255, 253, 0, 7, 8, 9, 10, 0, 200]);

function git(cwd: string, args: readonly string[], input?: Buffer): Buffer {
  return execFileSync('git', [...args], { cwd, input, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd }, maxBuffer: 64 << 20 });
}

/**
 * Inputs that are well-formed for git and asv but awkward for a parser, through the real CLI
 * (`perfmine stage collect --source git:PATH`, `perfmine stage filter`) on a real repository:
 * asv configs with comments, trailing commas and single quotes; and pull requests whose patch
 * holds binary files, renames and text that is not UTF-8. A stored diff must apply with
 * `git apply` on the base commit and give the merge commit's tree.
 */
describe('awkward inputs through collect (git source) and filter', () => {
  let repo: GitHistory;
  let dir: string;
  let db: string;
  let prs: Map<number, PullRequest>;
  let filter: Map<
    string,
    {
      status: string;
      reason: string | null;
      detail: string | null;
      output: { benchmarkDir: string | null; asvConfigPath: string | null } | null;
    }
  >;

  beforeAll(async () => {
    dir = tempDir('perfmine-bad-input-');
    const h = new GitHistoryBuilder();
    h.commit({
      message: 'Initial',
      date: '2025-03-01T00:00:00Z',
      files: {
        'asv.conf.json': ASV_JSON5,
        'fastlib/__init__.py': '',
        'fastlib/core.py': 'def total(xs):\n    return sum(xs)\n',
        'fastlib/legacy.py': LATIN1_BEFORE,
        'fastlib/table.bin': BIN_BEFORE,
        'fastlib/old_name.py': 'def helper(x):\n    """A helper that is moved by a pull request."""\n    return x + 1\n\n\nVALUE = 42\n',
        'perf_suite/bench_core.py': 'def time_total():\n    pass\n',
      },
    });
    h.squash({
      number: 1,
      title: 'PERF: faster total',
      files: { 'fastlib/core.py': 'def total(xs):\n    return sum(xs, 0)\n' },
      date: '2025-04-02T00:00:00Z',
    });
    h.squash({
      number: 2,
      title: 'PERF: new benchmark only',
      files: { 'perf_suite/bench_core.py': 'def time_total():\n    sum(range(10))\n' },
      date: '2025-04-03T00:00:00Z',
    });
    h.squash({
      number: 3,
      title: 'PERF: regenerate the lookup table',
      files: { 'fastlib/table.bin': BIN_AFTER, 'fastlib/new_table.bin': new Uint8Array([0, 0, 1, 0]) },
      date: '2025-04-04T00:00:00Z',
    });
    h.merge({
      number: 4,
      from: 'dev/rename',
      title: 'PERF: move the helper and speed it up',
      commits: [
        {
          message: 'move',
          files: {
            'fastlib/old_name.py': null,
            'fastlib/new_name.py':
              'def helper(x):\n    """A helper that is moved by a pull request."""\n    return x + 1\n\n\nVALUE = 43\n',
          },
          date: '2025-04-05T00:00:00Z',
        },
      ],
      date: '2025-04-06T00:00:00Z',
    });
    h.squash({
      number: 5,
      title: 'PERF: faster legacy names',
      files: { 'fastlib/legacy.py': LATIN1_AFTER, 'fastlib/core.py': 'def total(xs):\n    return sum(xs, 0)  # caf\u00e9\n' },
      date: '2025-04-07T00:00:00Z',
    });
    h.commit({
      message: 'Break the asv config',
      date: '2025-04-08T00:00:00Z',
      files: { 'asv.conf.json': '{ "version": 1, "benchmark_dir": }\n' },
    });
    h.squash({
      number: 6,
      title: 'PERF: faster after the config broke',
      files: { 'fastlib/core.py': 'def total(xs):\n    return sum(xs, 1) - 1\n' },
      date: '2025-04-09T00:00:00Z',
    });
    repo = await h.write();

    db = join(dir, 'perfmine.db');
    const env = { PERFMINE_LOG_FORMAT: 'json', PERFMINE_LOG_LEVEL: 'warn' };
    const collect = await runToEnd(
      ['--db', db, 'stage', 'collect', '--source', `git:${repo.path}`, '--repo', 'acme/fastlib', '--month', '2025-04'],
      { env },
    );
    expect(collect.code, collect.stderr).toBe(0);
    const filtered = await runToEnd(['--db', db, 'stage', 'filter', '--month', '2025-04'], { env });
    expect(filtered.code, filtered.stderr).toBe(0);
    const store = openStore(db);
    prs = new Map([1, 2, 3, 4, 5, 6].map((n) => [n, loadPullRequest(store, 'acme/fastlib', n)!]));
    store.close();
    const status = await runCli(['--db', db, 'status', '--stage', 'filter', '--items', '--json']);
    const d = new Database(db, { readonly: true });
    const outputs = new Map(
      (d.prepare("SELECT key, output FROM stage_items WHERE stage = 'filter'").all() as { key: string; output: string | null }[]).map(
        (r) => [r.key, r.output === null ? null : JSON.parse(r.output)],
      ),
    );
    d.close();
    filter = new Map(
      (JSON.parse(status.stdout).items as { key: string; status: string; reason: string | null; detail: string | null }[]).map((i) => [
        i.key,
        { ...i, output: outputs.get(i.key) },
      ]),
    );
  }, 120_000);

  afterAll(async () => {
    await repo?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Applies a stored diff with `git apply` on a fresh checkout of the base commit; returns the resulting tree. */
  function applyOnBase(pr: PullRequest): string {
    const work = mkdtempSync(join(tmpdir(), 'perfmine-apply-'));
    try {
      git(work, ['clone', '-q', '--no-checkout', repo.path, '.']);
      git(work, ['checkout', '-q', pr.baseSha]);
      const patch = join(work, '..', `${work.split('/').pop()}.diff`);
      writeFileSync(patch, pr.diff);
      git(work, ['apply', '--index', patch]);
      rmSync(patch);
      return git(work, ['write-tree']).toString().trim();
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  const treeOf = (sha: string) =>
    git(repo.path, ['rev-parse', `${sha}^{tree}`])
      .toString()
      .trim();

  describe('asv configs written as JSON5', () => {
    it('reads the config with comments, trailing commas and single quotes: its benchmark_dir decides what is core', () => {
      expect(prs.get(1)!.asvConfig).toEqual({ path: 'asv.conf.json', text: ASV_JSON5 });
      expect(filter.get('acme/fastlib#1')).toMatchObject({
        status: 'done',
        output: { asvConfigPath: 'asv.conf.json', benchmarkDir: 'perf_suite' },
      });
      // perf_suite/ is a benchmark directory only because the JSON5 config says so.
      expect(filter.get('acme/fastlib#2')).toMatchObject({ status: 'dropped', reason: 'no-core-files' });
    });

    it('drops a pull request whose base commit has a config that is not even JSON5, naming the file and the problem', () => {
      expect(filter.get('acme/fastlib#6')).toMatchObject({ status: 'dropped', reason: 'invalid-asv-config' });
      expect(filter.get('acme/fastlib#6')!.detail).toMatch(/^asv\.conf\.json at the base commit: not JSON5: /);
    });
  });

  describe('patches with binary files, renames and bytes that are not UTF-8', () => {
    it('records binary files as binary, with a diff that git applies byte-exactly', () => {
      const pr = prs.get(3)!;
      expect(pr.files).toEqual([
        { path: 'fastlib/new_table.bin', previousPath: null, status: 'added', additions: 0, deletions: 0, binary: true },
        { path: 'fastlib/table.bin', previousPath: null, status: 'modified', additions: 0, deletions: 0, binary: true },
      ]);
      expect(pr.diff).toBe(git(repo.path, ['diff', '--binary', '--full-index', '-M', pr.baseSha, pr.mergeSha]).toString('utf8'));
      expect(applyOnBase(pr)).toBe(treeOf(pr.mergeSha));
      expect(pr.missing).not.toContain('diff.bytes');
    });

    it('records a rename with its previous path, and its diff applies', () => {
      const pr = prs.get(4)!;
      expect(pr.files).toEqual([
        { path: 'fastlib/new_name.py', previousPath: 'fastlib/old_name.py', status: 'renamed', additions: 1, deletions: 1, binary: false },
      ]);
      expect(pr.diff).toBe(git(repo.path, ['diff', '--binary', '--full-index', '-M', pr.baseSha, pr.mergeSha]).toString('utf8'));
      expect(applyOnBase(pr)).toBe(treeOf(pr.mergeSha));
    });

    it('keeps the exact bytes of text that is not UTF-8 (as a git binary patch, marked on the record), with right line counts', () => {
      const pr = prs.get(5)!;
      expect(pr.files).toEqual([
        { path: 'fastlib/core.py', previousPath: null, status: 'modified', additions: 1, deletions: 1, binary: false },
        { path: 'fastlib/legacy.py', previousPath: null, status: 'modified', additions: 2, deletions: 2, binary: false },
      ]);
      // The UTF-8 file's change stays readable text; the Latin-1 one is kept byte-exact.
      expect(pr.diff).toContain('+    return sum(xs, 0)  # caf\u00e9\n');
      expect(pr.diff).not.toContain('\ufffd');
      expect(pr.missing).toContain('diff.bytes');
      expect(applyOnBase(pr)).toBe(treeOf(pr.mergeSha));
    });

    it('every stored diff of the window applies on its base commit and gives the merge tree', () => {
      for (const pr of prs.values()) expect(applyOnBase(pr), `#${pr.number}`).toBe(treeOf(pr.mergeSha));
    });
  });
});

/** The tree of a commit, path → bytes, as the loopback GitHub serves it. */
function treeAt(repo: string, sha: string): Record<string, FileContent> {
  const paths = git(repo, ['ls-tree', '-r', '-z', '--name-only', sha]).toString('utf8').split('\0').filter(Boolean);
  return Object.fromEntries(paths.map((p) => [p, git(repo, ['show', `${sha}:${p}`])]));
}

/**
 * GitHub renders a binary change as `Binary files ... differ`, which git cannot apply: collect
 * from GitHub (loopback server, real CLI) completes such sections from the files' bytes, so that
 * the stored diff applies on the base commit of the real repository.
 */
describe('binary files through collect from GitHub', () => {
  let repo: GitHistory;
  let gh: FakeGitHub;
  let dir: string;
  let pr: PullRequest;

  beforeAll(async () => {
    dir = tempDir('perfmine-gh-binary-');
    const h = new GitHistoryBuilder();
    h.commit({
      message: 'Initial',
      date: '2025-03-01T00:00:00Z',
      files: {
        'asv.conf.json': ASV_JSON5,
        'fastlib/core.py': 'x = 1\n',
        'fastlib/table.bin': BIN_BEFORE,
        'fastlib/gone.bin': new Uint8Array([0, 9, 9, 0]),
      },
    });
    h.squash({
      number: 7,
      title: 'PERF: precomputed tables',
      date: '2025-04-02T00:00:00Z',
      files: {
        'fastlib/core.py': 'x = 2\n',
        'fastlib/table.bin': BIN_AFTER,
        'fastlib/new.bin': new Uint8Array([0, 1, 0, 2, 0, 3]),
        'fastlib/gone.bin': null,
      },
    });
    repo = await h.write();
    const { baseSha, mergeSha } = repo.prs[0]!;
    const diff = git(repo.path, ['diff', baseSha, mergeSha]).toString('utf8');
    expect(diff).toContain('Binary files a/fastlib/table.bin and b/fastlib/table.bin differ');
    const files: FakeFile[] = git(repo.path, ['diff', '--numstat', baseSha, mergeSha])
      .toString('utf8')
      .trim()
      .split('\n')
      .map((line) => line.split('\t') as [string, string, string])
      .map(([add, del, path]) => ({
        filename: path,
        status: path.endsWith('new.bin') ? 'added' : path.endsWith('gone.bin') ? 'removed' : 'modified',
        additions: add === '-' ? 0 : Number(add),
        deletions: del === '-' ? 0 : Number(del),
        ...(add === '-' ? {} : { patch: '@@ -1 +1 @@\n-x = 1\n+x = 2' }),
      }));
    gh = await FakeGitHub.start({
      repos: [
        {
          fullName: 'acme/binaries',
          trees: { [baseSha]: treeAt(repo.path, baseSha), [mergeSha]: treeAt(repo.path, mergeSha) },
          pulls: [
            {
              number: 7,
              title: 'PERF: precomputed tables',
              createdAt: '2025-04-01T00:00:00Z',
              updatedAt: '2025-04-02T00:00:00Z',
              mergedAt: '2025-04-02T00:00:00Z',
              baseSha,
              mergeSha,
              headSha: mergeSha,
              files,
              diff,
            },
          ],
        },
      ],
    });
    const config = join(dir, 'perfmine.config.json');
    writeFileSync(config, JSON.stringify({ github: { baseUrl: gh.url, retryUnitMs: 1 } }));
    const db = join(dir, 'perfmine.db');
    const run = await runToEnd(['--db', db, '--config', config, 'stage', 'collect', '--repo', 'acme/binaries', '--month', '2025-04'], {
      env: { GITHUB_TOKEN: 'ghp_binary_test', PERFMINE_LOG_FORMAT: 'json', PERFMINE_LOG_LEVEL: 'warn' },
    });
    expect(run.code, run.stderr).toBe(0);
    const store = openStore(db);
    pr = loadPullRequest(store, 'acme/binaries', 7)!;
    store.close();
  }, 120_000);

  afterAll(async () => {
    await gh?.close();
    await repo?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores binary changes in full: the diff applies on the base commit and gives the merge tree', () => {
    expect(
      pr.files
        .filter((f) => f.binary)
        .map((f) => f.path)
        .sort(),
    ).toEqual(['fastlib/new.bin', 'fastlib/table.bin']);
    expect(pr.diff).not.toMatch(/^Binary files /m);
    expect(pr.diff.match(/^GIT binary patch$/gm)).toHaveLength(3);
    expect(pr.missing).not.toContain('diff.binary');
    const work = mkdtempSync(join(tmpdir(), 'perfmine-apply-'));
    try {
      git(work, ['clone', '-q', '--no-checkout', repo.path, '.']);
      git(work, ['checkout', '-q', pr.baseSha]);
      git(work, ['apply', '--index', '-'], Buffer.from(pr.diff, 'utf8'));
      expect(git(work, ['write-tree']).toString().trim()).toBe(
        git(repo.path, ['rev-parse', `${pr.mergeSha}^{tree}`])
          .toString()
          .trim(),
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
