import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPullRequest } from '../../cache/pull-requests.js';
import { pullRequestSchema } from '../../pipeline/concepts/records/pull-request.js';
import { runStage } from '../../pipeline/runner.js';
import { collectStage } from '../../stages/collect/index.js';
import { countRows, testContext, testScope } from '../fixtures/context.js';
import { GitHistoryBuilder, type GitHistory } from '../fixtures/git-history.js';

/**
 * History of the default branch (oldest first):
 *   root (Jan)              asv.conf.json at benchmarks/
 *   #10 squash (Mar 30)     before the window
 *   #11 merge  (Apr 2)      branch of 2 commits started Mar 28 (so createdAt = Mar 28)
 *   direct commit (Apr 3)   not a PR
 *   #12 squash (Apr 5)      author date Apr 4, committer date Apr 5; renames a file
 *   #13 merge  (Apr 9)      branch forked before #12 was merged, adds a binary file
 *   #14 squash             merged exactly at the window's end (excluded: [start, end))
 *   #15 squash (May 3)      after the window
 */
let repo: GitHistory;
const B = 'benchmarks/asv.conf.json';

beforeAll(async () => {
  const h = new GitHistoryBuilder({ defaultBranch: 'main' });
  h.commit({
    message: 'Initial import',
    files: {
      [B]: '{"version": 1, "project": "demo"}\n',
      'demo/__init__.py': '',
      'demo/core.py': 'def f():\n    return 1\n',
      'demo/util.py': 'A = 1\n',
    },
    date: '2025-01-10T00:00:00Z',
  });
  h.squash({ number: 10, title: 'Old change', files: { 'demo/core.py': 'def f():\n    return 2\n' }, date: '2025-03-30T00:00:00Z' });
  h.merge({
    number: 11,
    from: 'alice/faster-core',
    title: 'Make f faster',
    commits: [
      { message: 'start', files: { 'demo/core.py': 'def f():\n    return 2  # fast\n' }, date: '2025-03-28T08:00:00Z' },
      { message: 'tests', files: { 'tests/test_core.py': 'def test_f():\n    assert True\n' }, date: '2025-04-01T08:00:00Z' },
    ],
    date: '2025-04-02T12:00:00Z',
  });
  const forkPoint = h.tip!;
  h.commit({ message: 'Direct commit, no PR', files: { 'README.md': '# demo\n' }, date: '2025-04-03T00:00:00Z' });
  h.squash({
    number: 12,
    title: 'Move util to helpers',
    files: { 'demo/util.py': null, 'demo/helpers.py': 'A = 1\n' },
    date: '2025-04-04T10:00:00Z',
    mergedAt: '2025-04-05T10:00:00Z',
  });
  h.merge({
    number: 13,
    from: 'bob/vectorize',
    title: 'Vectorize g',
    base: forkPoint,
    commits: [
      {
        message: 'add g',
        files: { 'demo/g.py': 'def g(xs):\n    return [x * 2 for x in xs]\n', 'demo/table.bin': new Uint8Array([0, 1, 2, 255, 0]) },
        date: '2025-04-06T00:00:00Z',
      },
    ],
    date: '2025-04-09T00:00:00Z',
  });
  h.squash({
    number: 14,
    title: 'At the boundary',
    files: { 'demo/core.py': 'def f():\n    return 3\n' },
    date: '2025-04-30T00:00:00Z',
    mergedAt: '2025-05-01T00:00:00Z',
  });
  h.squash({ number: 15, title: 'Later', files: { 'demo/core.py': 'def f():\n    return 4\n' }, date: '2025-05-03T00:00:00Z' });
  repo = await h.write();
  await repo.git(['remote', 'add', 'origin', 'git@github.com:demo-org/demo.git']);
});

afterAll(async () => {
  await repo.cleanup();
});

const gitSource = () => ({ kind: 'git' as const, path: repo.path });
const built = (n: number) => repo.prs.find((p) => p.number === n)!;

describe('collect --source git:PATH', () => {
  it('finds exactly the merge and squash PRs merged on the default branch in [start, end)', async () => {
    const t = testContext();
    const report = await runStage(t.ctx, collectStage, testScope({ source: gitSource() }));
    expect(report.failed).toEqual({});
    expect(t.ctx.ledger.list('collect').map((r) => r.key)).toEqual(['demo-org/demo#11', 'demo-org/demo#12', 'demo-org/demo#13']);
    expect(countRows(t.db, 'pull_requests')).toBe(3);
  });

  it('records SHAs, dates, titles, files and the exact diff base..merge', async () => {
    const t = testContext();
    await runStage(t.ctx, collectStage, testScope({ source: gitSource() }));
    for (const n of [11, 12, 13]) {
      const pr = loadPullRequest(t.db, 'demo-org/demo', n)!;
      const want = built(n);
      expect(pr.baseSha).toBe(want.baseSha);
      expect(pr.mergeSha).toBe(want.mergeSha);
      expect(pr.headSha).toBe(want.headSha);
      expect(pr.mergedAt).toBe(want.mergedAt);
      expect(pr.title).toBe(want.title);
      expect(pr.diff).toBe(await repo.git(['diff', '-M', '--no-color', '--binary', '--full-index', want.baseSha, want.mergeSha]));
      expect(pr.url).toBe(`https://github.com/demo-org/demo/pull/${n}`);
      expect(pr.source).toBe('git');
      expect(pr.asvConfig).toEqual({ path: B, text: '{"version": 1, "project": "demo"}\n' });
    }
    const merge11 = loadPullRequest(t.db, 'demo-org/demo', 11)!;
    expect(merge11.createdAt).toBe('2025-03-28T08:00:00.000Z'); // first commit of the branch
    expect(merge11.files.map((f) => [f.path, f.status, f.additions, f.deletions])).toEqual([
      ['demo/core.py', 'modified', 1, 1],
      ['tests/test_core.py', 'added', 2, 0],
    ]);
    expect(merge11.missing).toEqual(['body', 'labels', 'author', 'authorAssociation', 'comments', 'linkedIssues']);

    const squash12 = loadPullRequest(t.db, 'demo-org/demo', 12)!;
    expect(squash12.createdAt).toBe('2025-04-04T10:00:00.000Z'); // the squash commit's author date
    expect(squash12.mergedAt).toBe('2025-04-05T10:00:00.000Z');
    expect(squash12.files).toEqual([
      { path: 'demo/helpers.py', previousPath: 'demo/util.py', status: 'renamed', additions: 0, deletions: 0, binary: false },
    ]);
    expect(squash12.missing).toContain('headSha');

    const merge13 = loadPullRequest(t.db, 'demo-org/demo', 13)!;
    expect(merge13.createdAt).toBe('2025-04-06T00:00:00.000Z');
    expect(merge13.files.find((f) => f.path === 'demo/table.bin')).toEqual({
      path: 'demo/table.bin',
      previousPath: null,
      status: 'added',
      additions: 0,
      deletions: 0,
      binary: true,
    });
    // The binary file is in the diff in full, so that `git apply` can apply it.
    expect(merge13.diff).toMatch(
      /diff --git a\/demo\/table\.bin b\/demo\/table\.bin\nnew file mode 100644\nindex 0{40}\.\.[0-9a-f]{40}\nGIT binary patch\nliteral 5\n/,
    );
  });

  it('stores each record as pullRequestSchema writes it (valid, in the schema order, nothing more)', async () => {
    const t = testContext();
    await runStage(t.ctx, collectStage, testScope({ source: gitSource() }));
    const rows = t.db.prepare('SELECT record, diff FROM pull_requests ORDER BY number').all() as { record: string; diff: string }[];
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      const stored = JSON.parse(row.record) as Record<string, unknown>;
      const { diff: _diff, ...parsed } = pullRequestSchema.parse({ ...stored, diff: row.diff });
      expect(JSON.stringify(parsed)).toBe(row.record);
    }
  });

  it('names the repository from --repo when given, and runs nothing twice', async () => {
    const t = testContext();
    const first = await runStage(t.ctx, collectStage, testScope({ source: gitSource(), repos: ['someone/renamed'] }));
    expect(first.done).toBe(3);
    expect(loadPullRequest(t.db, 'someone/renamed', 12)).toBeDefined();
    const again = await runStage(t.ctx, collectStage, testScope({ source: gitSource(), repos: ['someone/renamed'] }));
    expect(again).toMatchObject({ ran: 0, reused: 3, done: 3 });
  });

  it('honours --pr and a window without PRs', async () => {
    const t = testContext();
    const one = await runStage(t.ctx, collectStage, testScope({ source: gitSource(), prs: [13] }));
    expect(one.done).toBe(1);
    const none = await runStage(t.ctx, collectStage, testScope({ source: gitSource(), window: '2024-06' }));
    expect(none.planned).toBe(0);
  });

  it('a forced re-run reads the commits again (batched) and stores identical records', async () => {
    const t = testContext({ config: { collect: { gitBatchSize: 2 } } });
    await runStage(t.ctx, collectStage, testScope({ source: gitSource() }));
    const before = loadPullRequest(t.db, 'demo-org/demo', 13);
    const forced = await runStage(t.ctx, collectStage, testScope({ source: gitSource() }), { force: true });
    expect(forced.ran).toBe(3);
    expect(loadPullRequest(t.db, 'demo-org/demo', 13)).toEqual(before);
  });

  it('refuses a path that is not a git repository, before any item', async () => {
    const t = testContext();
    await expect(runStage(t.ctx, collectStage, testScope({ source: { kind: 'git', path: '/' } }))).rejects.toThrow(/not a git repository/);
  });
});

describe('git history fixture', () => {
  it('writes the declared history with the given dates and the GitHub message formats', () => {
    const log = execFileSync('git', ['-C', repo.path, 'log', '--first-parent', '--format=%s|%aI|%cI', 'main'], { encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(log).toContain('Move util to helpers (#12)|2025-04-04T10:00:00+00:00|2025-04-05T10:00:00+00:00');
    expect(log).toContain('Merge pull request #13 from bob/vectorize|2025-04-09T00:00:00+00:00|2025-04-09T00:00:00+00:00');
    expect(log).toHaveLength(8);
    expect(repo.commitCount).toBe(11);
    expect(
      execFileSync('git', ['-C', repo.path, 'rev-list', '--parents', '-n1', built(13).mergeSha], { encoding: 'utf8' })
        .trim()
        .split(' '),
    ).toEqual([built(13).mergeSha, built(13).baseSha, built(13).headSha]);
  });
});
