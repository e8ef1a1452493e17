import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listRepositories, loadRepository } from '../../cache/repositories.js';
import { runStage } from '../../pipeline/runner.js';
import { collectStage } from '../../stages/collect/index.js';
import { discoverStage } from '../../stages/discover/index.js';
import { testContext, testScope } from '../fixtures/context.js';
import { GitHistoryBuilder, type GitHistory } from '../fixtures/git-history.js';
import { syntheticRepo } from '../fakes/github-data.js';
import { FakeGitHub, type FakeRepo } from '../fakes/github-server.js';

const ASV = { 'asv.conf.json': '{"version": 1}\n' };
const PY39 = { 'pyproject.toml': '[project]\nrequires-python = ">=3.9"\n' };
const repo = (fullName: string, extra: Partial<FakeRepo> = {}): FakeRepo => ({
  fullName,
  stars: 800,
  pushedAt: '2025-03-01T00:00:00Z',
  files: { ...ASV, ...PY39 },
  ...extra,
});

const REPOS: FakeRepo[] = [
  repo('good/kept'),
  repo('good/nested', {
    files: { 'benchmarks/asv.conf.jsonc': '{}', 'python/setup.py': 'setup(python_requires=">=3.7")', 'benchmarks/../x': '' },
  }),
  repo('bad/few-stars', { stars: 99 }),
  repo('bad/fork', { fork: true }),
  repo('bad/archived', { archived: true }),
  repo('bad/disabled', { disabled: true }),
  repo('bad/stale', { pushedAt: '2021-12-31T00:00:00Z' }),
  repo('bad/old-python', { files: { ...ASV, 'setup.py': 'setup(python_requires=">=2.7, <3.8")' } }),
  repo('bad/old-classifiers', {
    files: {
      ...ASV,
      'setup.cfg': '[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.6\n    Programming Language :: Python :: 3.7\n',
    },
  }),
  repo('bad/no-asv', { files: { ...PY39 } }),
  repo('new/name', { formerNames: ['old/name'] }),
];

describe('discover: enrichment and filters (loopback GitHub)', () => {
  let gh: FakeGitHub;
  beforeAll(async () => {
    gh = await FakeGitHub.start({ repos: REPOS });
  });
  afterAll(async () => {
    await gh.close();
  });

  const setup = (config: Record<string, unknown> = {}) =>
    testContext({ tokens: ['tok'], config: { github: { baseUrl: gh.url, retryUnitMs: 1 }, ...config } });

  it('records every rejection with its reason and keeps the rest, with stars, flags, branch and asv config path', async () => {
    const t = setup();
    const names = [...REPOS.filter((r) => r.fullName !== 'new/name').map((r) => r.fullName), 'bad/deleted'];
    const report = await runStage(t.ctx, discoverStage, testScope({ repos: names }));
    expect(report.failed).toEqual({});
    const decided = Object.fromEntries(t.ctx.ledger.list('discover').map((r) => [r.key, r.status === 'done' ? 'done' : r.reason]));
    expect(decided).toEqual({
      'good/kept': 'done',
      'good/nested': 'done',
      'bad/few-stars': 'too-few-stars',
      'bad/fork': 'repo-fork',
      'bad/archived': 'repo-archived',
      'bad/disabled': 'repo-disabled',
      'bad/stale': 'inactive',
      'bad/old-python': 'python-too-old',
      'bad/old-classifiers': 'python-too-old',
      'bad/no-asv': 'no-asv-config',
      'bad/deleted': 'repo-not-found',
    });
    expect(loadRepository(t.db, 'good/kept')).toMatchObject({
      stars: 800,
      fork: false,
      archived: false,
      defaultBranch: 'main',
      asvConfigPath: 'asv.conf.json',
      pythonRequires: 'requires-python >=3.9',
      verdict: 'kept',
      source: 'github',
    });
    // A monorepo: the asv config is nested, the package metadata lives next to it.
    expect(loadRepository(t.db, 'good/nested')).toMatchObject({ asvConfigPath: 'benchmarks/asv.conf.jsonc', pythonRequires: null });
    expect(loadRepository(t.db, 'bad/fork')).toMatchObject({ fork: true, verdict: 'repo-fork' });
    expect(loadRepository(t.db, 'bad/old-python')).toMatchObject({
      pythonRequires: 'python_requires >=2.7, <3.8',
      verdict: 'python-too-old',
    });
    expect(loadRepository(t.db, 'bad/deleted')).toBeUndefined();
    expect(t.ctx.ledger.get('discover', 'bad/stale')!.detail).toMatch(/no push since 2021-12-31/);
  });

  it('follows a 301 and stores the repository under its new name, findable by the old one', async () => {
    const t = setup();
    const report = await runStage(t.ctx, discoverStage, testScope({ repos: ['old/name'] }));
    expect(report.done).toBe(1);
    expect(gh.requests((r) => r.path === '/repos/old/name' && r.status === 301).length).toBeGreaterThan(0);
    expect(listRepositories(t.db).map((r) => r.name)).toEqual(['new/name']);
    expect(loadRepository(t.db, 'old/name')).toMatchObject({ name: 'new/name', formerNames: ['old/name'] });
    expect(t.ctx.ledger.get('discover', 'old/name')!.output).toMatchObject({ name: 'new/name' });
  });

  it('judges activity against the window: the same repository is inactive for a later month', async () => {
    const t = setup({ discover: { maxInactiveYears: 1 } });
    await runStage(t.ctx, discoverStage, testScope({ repos: ['good/kept'], window: '2025-04' }));
    await runStage(t.ctx, discoverStage, testScope({ repos: ['good/kept'], window: '2026-06' }));
    expect(t.ctx.ledger.get('discover', 'good/kept')).toMatchObject({ status: 'dropped', reason: 'inactive' });
  });

  it('reads a list file (discover.source "list") and re-runs nothing for the same month', async () => {
    const file = join(tmpdir(), `perfmine-list-${process.pid}.txt`);
    await writeFile(file, '# repos\ngood/kept\nbad/fork\n');
    const t = setup({ discover: { source: 'list', listFile: file } });
    const first = await runStage(t.ctx, discoverStage, testScope());
    expect(first).toMatchObject({ planned: 2, done: 1, dropped: { 'repo-fork': 1 } });
    const again = await runStage(t.ctx, discoverStage, testScope());
    expect(again).toMatchObject({ ran: 0, reused: 2 });
  });

  it('a list source without a file is a configuration error that says what to set', async () => {
    const t = setup({ discover: { source: 'list' } });
    await expect(runStage(t.ctx, discoverStage, testScope())).rejects.toThrow(/discover.listFile: not set/);
  });
});

describe('discover then collect (loopback GitHub)', () => {
  it('collect takes the repositories discover kept, under their canonical names', async () => {
    const gh = await FakeGitHub.start({
      repos: [
        {
          ...syntheticRepo(0, { pulls: 6, mergedFrom: '2025-04-01T00:00:00Z', mergedTo: '2025-05-01T00:00:00Z' }),
          formerNames: ['org0/oldname'],
        },
        { ...syntheticRepo(1, { pulls: 4, mergedFrom: '2025-04-01T00:00:00Z', mergedTo: '2025-05-01T00:00:00Z' }), stars: 3 },
      ],
    });
    try {
      const listed = join(tmpdir(), `perfmine-list2-${process.pid}.txt`);
      await writeFile(listed, 'org0/oldname\norg1/project1\n');
      const t = testContext({
        tokens: ['tok'],
        config: { github: { baseUrl: gh.url, retryUnitMs: 1 }, discover: { source: 'list', listFile: listed } },
      });
      const d = await runStage(t.ctx, discoverStage, testScope());
      expect(d).toMatchObject({ done: 1, dropped: { 'too-few-stars': 1 } });
      const c = await runStage(t.ctx, collectStage, testScope());
      expect(c).toMatchObject({ done: 6, failed: {} });
      expect(new Set(t.ctx.ledger.list('collect').map((r) => r.repo))).toEqual(new Set(['org0/project0']));
      // The stored repository gave collect its canonical name and default branch: the only
      // repository request is discover's (the 301, then the redirect's target).
      expect(gh.requests((r) => /^\/(repos\/org0\/oldname|repositories\/\d+)$/.test(r.path)).map((r) => r.status)).toEqual([301, 200]);
    } finally {
      await gh.close();
    }
  });
});

describe('discover --source git:PATH', () => {
  let clone: GitHistory;
  beforeAll(async () => {
    const h = new GitHistoryBuilder({ defaultBranch: 'develop' });
    h.commit({
      message: 'init',
      files: { 'benchmarks/asv.conf.json': '{}', 'pyproject.toml': '[project]\nrequires-python = ">=3.10"\n' },
      date: '2025-01-01T00:00:00Z',
    });
    clone = await h.write();
    await clone.git(['remote', 'add', 'origin', 'https://github.com/someorg/somerepo.git']);
  });
  afterAll(async () => {
    await clone.cleanup();
  });

  it('records the clone as the one repository, without any API call or token', async () => {
    const t = testContext({ config: { github: { baseUrl: 'http://127.0.0.1:9' } } });
    const report = await runStage(t.ctx, discoverStage, testScope({ source: { kind: 'git', path: clone.path } }));
    expect(report.done).toBe(1);
    expect(loadRepository(t.db, 'someorg/somerepo')).toMatchObject({
      source: 'git',
      localPath: clone.path,
      defaultBranch: 'develop',
      asvConfigPath: 'benchmarks/asv.conf.json',
      pythonRequires: 'requires-python >=3.10',
      stars: null,
    });
    expect(t.metrics.get('github.requests')).toBe(0);
    const named = await runStage(t.ctx, discoverStage, testScope({ source: { kind: 'git', path: clone.path }, repos: ['me/mine'] }));
    expect(named.done).toBe(1);
    expect(loadRepository(t.db, 'me/mine')?.localPath).toBe(clone.path);
  });
});
