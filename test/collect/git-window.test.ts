import PQueue from 'p-queue';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadPullRequest } from '../../cache/pull-requests.js';
import { runStage } from '../../pipeline/runner.js';
import { GitService } from '../../pipeline/services/git.js';
import { monthWindow, rangeWindow } from '../../pipeline/window.js';
import { findGitPullRequests } from '../../stages/collect/git-pulls.js';
import { readWindow } from '../../stages/collect/git-source.js';
import { collectStage } from '../../stages/collect/index.js';
import { testContext, testScope } from '../fixtures/context.js';
import type { GitHistory } from '../fixtures/git-history.js';
import { buildLargeHistory } from '../fixtures/large-history.js';

/**
 * The git source reads only the window's part of a clone's history. On a generated history of a
 * year (squash PRs, merge PRs with branches, direct commits), every month's pull requests are the
 * ones the whole history gives, with the same bases, heads and dates.
 */
let repo: GitHistory;
const git = new GitService({ queue: new PQueue({ concurrency: 2 }), timeoutMs: 60_000 });
const MONTHS = ['2024-01', '2024-02', '2024-05', '2024-08', '2024-11', '2024-12', '2025-01'];

beforeAll(async () => {
  const { builder } = buildLargeHistory({ commits: 800, start: '2024-01-01T00:00:00Z', end: '2025-01-01T00:00:00Z', modules: 20 });
  repo = await builder.write();
});

afterAll(async () => {
  await repo.cleanup();
});

describe('collect --source git:PATH over a window', () => {
  it("finds each month's pull requests as the whole history does, reading only the line down to the window", async () => {
    const tip = (await repo.git(['rev-parse', 'main'])).trim();
    const whole = await git.graph(repo.path, tip);
    const mainline = await git.graph(repo.path, tip, { firstParent: true });
    let found = 0;
    for (const month of MONTHS) {
      const window = monthWindow(month);
      const expected = findGitPullRequests(whole, tip, window);
      const read = await readWindow(git, repo.path, tip, window, 0);
      expect({ pulls: read.pulls, withoutBase: read.withoutBase }, month).toEqual(expected);
      found += expected.pulls.length;
      // The line is read from the tip down to the window's start, no further.
      const below = mainline.filter((c) => c.committerDate < window.start).length;
      expect(read.line.length, month).toBe(mainline.length - below);
      if (expected.pulls.length > 0) expect(read.sideCommits, month).toBeLessThan(whole.length - mainline.length);
    }
    expect(found).toBeGreaterThan(150);
  });

  it('collects a month with the same records as a run over the whole year keeps for it', async () => {
    const year = testContext();
    await runStage(
      year.ctx,
      collectStage,
      testScope({
        source: { kind: 'git', path: repo.path },
        repos: ['bench/big'],
        window: rangeWindow(new Date('2023-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z')),
      }),
    );
    const month = testContext();
    const report = await runStage(
      month.ctx,
      collectStage,
      testScope({ source: { kind: 'git', path: repo.path }, repos: ['bench/big'], window: '2024-05' }),
    );
    expect(report.failed).toEqual({});
    expect(report.done).toBeGreaterThan(20);
    for (const row of month.ctx.ledger.list('collect')) {
      const number = Number(row.key.split('#')[1]);
      expect(loadPullRequest(month.db, 'bench/big', number), row.key).toEqual(loadPullRequest(year.db, 'bench/big', number));
    }
  });

  it('reads the commits with several git processes, each every n-th, and stores the records one process stores', async () => {
    const scope = testScope({
      source: { kind: 'git', path: repo.path },
      repos: ['bench/big'],
      window: rangeWindow(new Date('2023-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z')),
    });
    const records = (db: (typeof one)['db']) =>
      db
        .prepare<[], { number: number; content_hash: string; record: string; diff: string }>(
          'SELECT number, content_hash, record, diff FROM pull_requests ORDER BY number',
        )
        .all();
    const one = testContext({ config: { collect: { gitStreams: 1 } } });
    const oneStream = vi.spyOn(one.ctx.services.git, 'streamCommitLists');
    const single = await runStage(one.ctx, collectStage, scope);
    expect(oneStream).toHaveBeenCalledTimes(1);
    expect(oneStream.mock.calls[0]![1]).toHaveLength(1);
    const order = oneStream.mock.calls[0]![1][0]!;
    expect(single.done).toBeGreaterThan(300);

    // three processes, at most 4 commits read ahead in all: each waits in turn for the others'
    // commits to be taken; the git queue has one slot, which the asv config reads take
    const git = new GitService({ queue: new PQueue({ concurrency: 1 }), timeoutMs: 60_000 });
    const three = testContext({ config: { collect: { gitStreams: 3, gitBatchSize: 4 } }, services: { git } });
    const together = vi.spyOn(git, 'streamCommitLists');
    const asvChanges = vi.spyOn(git, 'asvConfigChanges');
    const dealt = await runStage(three.ctx, collectStage, scope);
    expect(together).toHaveBeenCalledTimes(1);
    expect(together.mock.calls[0]![1]).toEqual([0, 1, 2].map((r) => order.filter((_, i) => i % 3 === r)));
    expect(dealt).toMatchObject({ done: single.done, failed: {} });
    expect(records(three.db)).toEqual(records(one.db));
    // the asv config changes between the window's bases: read once, by the plan, while it goes on
    expect(asvChanges).toHaveBeenCalledTimes(1);
  });
});
