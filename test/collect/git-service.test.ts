import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutsideServiceError } from '../../pipeline/errors.js';
import { GitService, repoNameFromRemote } from '../../pipeline/services/git.js';
import { GitHistoryBuilder, type CommitRef, type GitHistory } from '../fixtures/git-history.js';

let repo: GitHistory;
const refs: Record<string, CommitRef> = {};
const git = new GitService({ queue: new PQueue({ concurrency: 2 }), timeoutMs: 30_000 });

beforeAll(async () => {
  const h = new GitHistoryBuilder();
  refs.root = h.commit({ message: 'root', files: { 'pkg/__init__.py': '', 'pkg/a.py': 'a = 1\n' }, date: '2025-01-01T00:00:00Z' });
  refs.addBench = h.merge({
    number: 1,
    from: 'u/bench',
    title: 'Add benchmarks',
    commits: [
      {
        message: 'bench',
        files: { 'benchmarks/asv.conf.json': '{"v": "bench"}\n', 'benchmarks/bench_a.py': 'def time_a(): pass\n' },
        date: '2025-01-05T00:00:00Z',
      },
    ],
    date: '2025-01-06T00:00:00Z',
  });
  refs.addRoot = h.squash({ number: 2, title: 'Root config', files: { 'asv.conf.json': '{"v": "root"}\n' }, date: '2025-02-01T00:00:00Z' });
  refs.dropBench = h.squash({
    number: 3,
    title: 'Drop bench config',
    files: { 'benchmarks/asv.conf.json': null },
    date: '2025-03-01T00:00:00Z',
  });
  refs.toJsonc = h.squash({
    number: 4,
    title: 'jsonc',
    files: { 'asv.conf.json': null, 'asv.conf.jsonc': '// c\n{"v": "jsonc"}\n' },
    date: '2025-04-01T00:00:00Z',
  });
  refs.noAsv = h.squash({ number: 5, title: 'No asv', files: { 'asv.conf.jsonc': null }, date: '2025-04-15T00:00:00Z' });
  refs.edit = h.squash({ number: 6, title: 'Edit a', files: { 'pkg/a.py': 'a = 2\nb = 3\n' }, date: '2025-04-20T00:00:00Z' });
  repo = await h.write();
});

afterAll(async () => {
  await repo.cleanup();
});

describe('git adapter', () => {
  it('reads logs with numstat (and patches), first-parent and date-bounded', async () => {
    const commits = await git.log(repo.path, { revs: ['main'], firstParent: true, since: '2025-03-01T00:00:00Z', patch: true });
    expect(commits.map((c) => c.message.split('\n')[0])).toEqual(['Edit a (#6)', 'No asv (#5)', 'jsonc (#4)', 'Drop bench config (#3)']);
    expect(commits[0]!.files).toEqual([
      { path: 'pkg/a.py', previousPath: null, status: 'modified', additions: 2, deletions: 1, binary: false },
    ]);
    expect(commits[0]!.patch).toBe(await repo.git(['diff', '--binary', '--full-index', repo.sha(refs.noAsv!), repo.sha(refs.edit!)]));
    const merge = await git.commits(repo.path, [repo.sha(refs.addBench!)]);
    expect(merge[0]!.files.map((f) => f.path)).toEqual(['benchmarks/asv.conf.json', 'benchmarks/bench_a.py']);
  });

  it('counts lines from the patch exactly as git --numstat does', async () => {
    const withPatch = await git.log(repo.path, { revs: ['main'], patch: true });
    const withNumstat = await git.log(repo.path, { revs: ['main'] });
    expect(withPatch.map((c) => c.files.map((f) => [f.path, f.additions, f.deletions]))).toEqual(
      withNumstat.map((c) => c.files.map((f) => [f.path, f.additions, f.deletions])),
    );
    expect(withPatch.flatMap((c) => c.files).length).toBeGreaterThan(10);
  });

  it('diffs, lists trees, shows files and dates commits', async () => {
    const base = repo.sha(refs.root!);
    const head = repo.sha(refs.addBench!);
    expect(await git.diff(repo.path, base, head)).toBe(await repo.git(['diff', '--binary', '--full-index', base, head]));
    const tree = await git.lsTree(repo.path, head, { recursive: true, long: true });
    expect(tree.map((e) => e.path)).toEqual(['benchmarks/asv.conf.json', 'benchmarks/bench_a.py', 'pkg/__init__.py', 'pkg/a.py']);
    expect(tree[0]!.size).toBe(15);
    expect((await git.show(repo.path, head, 'benchmarks/asv.conf.json'))?.toString()).toBe('{"v": "bench"}\n');
    expect(await git.show(repo.path, head, 'nope.txt')).toBeNull();
    expect(await git.commitDates(repo.path, repo.sha(refs.edit!))).toEqual({
      authorDate: '2025-04-20T00:00:00.000Z',
      committerDate: '2025-04-20T00:00:00.000Z',
    });
    expect(await git.revParse(repo.path, 'main')).toBe(repo.sha(refs.edit!));
    expect(await git.revParse(repo.path, 'no-such-branch')).toBeNull();
  });

  it('finds the asv config at any commit, one by one and batched along the mainline, with the same answers', async () => {
    const expected: Record<string, { path: string; text: string } | null> = {
      root: null,
      addBench: { path: 'benchmarks/asv.conf.json', text: '{"v": "bench"}\n' },
      addRoot: { path: 'asv.conf.json', text: '{"v": "root"}\n' },
      dropBench: { path: 'asv.conf.json', text: '{"v": "root"}\n' },
      toJsonc: { path: 'asv.conf.jsonc', text: '// c\n{"v": "jsonc"}\n' },
      noAsv: null,
      edit: null,
    };
    const shas = Object.keys(expected).map((k) => repo.sha(refs[k]!));
    const line = (await git.graph(repo.path, 'main', { firstParent: true })).map((c) => c.sha);
    const batched = await git.findAsvConfigs(repo.path, line, shas);
    for (const [name, want] of Object.entries(expected)) {
      expect(await git.findAsvConfig(repo.path, repo.sha(refs[name]!)), name).toEqual(want);
      expect(batched.get(repo.sha(refs[name]!)), name).toEqual(want);
    }
    // A part of the line: read from the oldest wanted commit's tree, the same answers; and with
    // the changes of the whole line read before (the plan's read, which holds the changes of the
    // oldest wanted commit itself too: applied again to its tree, they change nothing).
    const everyChange = await git.asvConfigChanges(repo.path, `${repo.sha(refs.root!)}..main`);
    expect(everyChange.get(repo.sha(refs.dropBench!))).toEqual([{ path: 'benchmarks/asv.conf.json', blob: null }]);
    expect(everyChange.get(repo.sha(refs.addRoot!))).toEqual([
      { path: 'asv.conf.json', blob: (await repo.git(['rev-parse', `${repo.sha(refs.addRoot!)}:asv.conf.json`])).trim() },
    ]);
    for (const part of [['dropBench', 'toJsonc'], ['addRoot'], ['addBench', 'noAsv'], ['addBench', 'edit']]) {
      const wanted = part.map((k) => repo.sha(refs[k]!));
      const want = Object.fromEntries(part.map((k) => [k, expected[k]]));
      const some = await git.findAsvConfigs(repo.path, line, wanted);
      expect(Object.fromEntries(part.map((k) => [k, some.get(repo.sha(refs[k]!))]))).toEqual(want);
      const given = await git.findAsvConfigs(repo.path, line, wanted, { changes: everyChange });
      expect(Object.fromEntries(part.map((k) => [k, given.get(repo.sha(refs[k]!))]))).toEqual(want);
    }
  });

  it('tells the default branch: origin/HEAD, else the checked-out branch; openClone agrees, with its tip', async () => {
    const agrees = async (branch: string) => {
      expect(await git.defaultBranch(repo.path)).toBe(branch);
      expect(await git.openClone(repo.path)).toEqual({ defaultBranch: branch, tip: await git.revParse(repo.path, branch) });
    };
    await agrees('main');
    await repo.git(['branch', 'trunk', 'main~1']);
    await repo.git(['update-ref', 'refs/remotes/origin/trunk', 'main~2']);
    await repo.git(['symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/trunk']);
    await agrees('trunk');
    // origin/HEAD names a branch with no local copy: the remote one.
    await repo.git(['update-ref', 'refs/remotes/origin/dev', 'main~3']);
    await repo.git(['symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/dev']);
    await agrees('origin/dev');
    await repo.git(['symbolic-ref', '-d', 'refs/remotes/origin/HEAD']);
    // Without origin/HEAD: the checked-out branch, then main or master.
    await repo.git(['symbolic-ref', 'HEAD', 'refs/heads/trunk']);
    await agrees('trunk');
    await repo.git(['update-ref', '--no-deref', 'HEAD', 'main~1']);
    await agrees('main');
    await repo.git(['symbolic-ref', 'HEAD', 'refs/heads/main']);
    await repo.git(['branch', '-D', 'trunk']);
    await repo.git(['update-ref', '-d', 'refs/remotes/origin/trunk']);
    await repo.git(['update-ref', '-d', 'refs/remotes/origin/dev']);
    expect(await git.openClone(tmpdir())).toBeNull();
  });

  it('names a clone from its remote URL, else local/<dir>', () => {
    expect(repoNameFromRemote('https://github.com/pandas-dev/pandas.git', '/x')).toBe('pandas-dev/pandas');
    expect(repoNameFromRemote('git@github.com:scipy/scipy.git', '/x')).toBe('scipy/scipy');
    expect(repoNameFromRemote('https://gitlab.example.com/grp/proj', '/x')).toBe('grp/proj');
    expect(repoNameFromRemote(null, '/srv/clones/my repo/')).toBe('local/my-repo');
  });

  it('fails with named reasons: a bad revision, a process that outlives its timeout', async () => {
    await expect(git.diff(repo.path, 'nope', 'main')).rejects.toMatchObject({ reason: 'git-failed', kind: 'outside-service' });
    const dir = await mkdtemp(join(tmpdir(), 'perfmine-slow-git-'));
    const slow = join(dir, 'git');
    await writeFile(slow, '#!/bin/sh\nexec sleep 10\n');
    await chmod(slow, 0o755);
    const stuck = new GitService({ queue: new PQueue({ concurrency: 1 }), timeoutMs: 1_000, binary: slow });
    const error = await stuck.text(repo.path, ['log']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutsideServiceError);
    expect((error as OutsideServiceError).reason).toBe('git-timeout');
    await rm(dir, { recursive: true, force: true });
  });
});
