import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadPullRequest } from '../../cache/pull-requests.js';
import { runStage } from '../../pipeline/runner.js';
import { collectStage } from '../../stages/collect/index.js';
import { countRows, testContext, testScope } from '../fixtures/context.js';
import { sha, syntheticFiles } from '../fakes/github-data.js';
import { FakeGitHub, type FakePull, type FakeRepo } from '../fakes/github-server.js';

const REPO = 'acme/fastlib';
const TOKEN = 'ghp_testtoken_aaaaaaaaaaaaaaaa';

function pull(number: number, mergedAt: string | null, extra: Partial<FakePull> = {}): FakePull {
  const merged = mergedAt ?? '2025-04-10T00:00:00Z';
  const created = new Date(Date.parse(merged) - 3 * 86_400_000).toISOString();
  return {
    number,
    title: `Speed up thing ${number}`,
    body: 'Faster.',
    createdAt: created,
    updatedAt: new Date(Date.parse(merged) + 3_600_000).toISOString(),
    mergedAt,
    headSha: sha(number, 'head'),
    mergeSha: mergedAt === null ? null : sha(number, 'merge'),
    baseSha: sha(number, 'base'),
    files: () => syntheticFiles(REPO, number, 2),
    ...extra,
  };
}

/** 25 filler PRs merged in April, one in March, a closed-unmerged one, one into another branch. */
function repository(extraPulls: FakePull[] = []): FakeRepo {
  const filler = Array.from({ length: 25 }, (_, i) => pull(200 + i, `2025-04-${String(2 + i).padStart(2, '0')}T12:00:00Z`));
  return {
    fullName: REPO,
    stars: 1200,
    defaultBranch: 'main',
    pushedAt: '2025-04-30T00:00:00Z',
    files: {
      'benchmarks/asv.conf.json': '{"version": 1, "project": "fastlib"}\n',
      'pyproject.toml': '[project]\nrequires-python = ">=3.9"\n',
    },
    pulls: [
      ...filler,
      pull(90, '2025-03-15T00:00:00Z'),
      pull(91, null, { state: 'closed' }),
      pull(92, '2025-04-12T00:00:00Z', { baseRef: 'maint' }),
      ...extraPulls,
    ],
    issues: [
      {
        number: 50,
        title: 'parse() is slow on long inputs',
        body: 'Takes 3 s on 1 MB.',
        labels: ['performance'],
        createdAt: '2025-03-01T00:00:00Z',
        comments: [
          { user: 'reporter', body: 'profile attached', createdAt: '2025-03-02T00:00:00Z' },
          { user: 'dev', body: 'fixed by the PR (written after it opened)', createdAt: '2025-04-09T00:00:00Z' },
        ],
      },
      { number: 51, title: 'memory blowup', body: 'see profile', createdAt: '2025-02-01T00:00:00Z' },
      { number: 52, title: 'opened after the PR', body: 'future', createdAt: '2025-04-08T00:00:00Z' },
    ],
  };
}

const linkedPull = pull(101, '2025-04-09T10:00:00Z', {
  title: 'Speed up parse()',
  body: 'Fixes #50, see https://github.com/acme/fastlib/issues/51 and acme/elsewhere#7.\nAlso #52 (opened later) and #200 (a PR).\n```\n#999 in code\n```',
  createdAt: '2025-04-07T00:00:00Z',
  labels: ['performance', 'parser'],
  user: 'alice',
  authorAssociation: 'MEMBER',
  comments: [{ user: 'bob', body: 'LGTM', createdAt: '2025-04-08T00:00:00Z', authorAssociation: 'MEMBER' }],
  reviewComments: [{ user: 'bob', body: 'nit', createdAt: '2025-04-08T01:00:00Z', path: 'pkg/parse.py' }],
  files: [
    { filename: 'pkg/parse.py', status: 'modified', additions: 2, deletions: 1, patch: '@@ -1,2 +1,3 @@\n-slow()\n+fast()\n+cache()\n ok' },
    { filename: 'pkg/new.py', status: 'added', additions: 1, deletions: 0, patch: '@@ -0,0 +1 @@\n+x = 1' },
  ],
  diff: 'diff --git a/pkg/parse.py b/pkg/parse.py\nindex 1..2 100644\n--- a/pkg/parse.py\n+++ b/pkg/parse.py\n@@ -1,2 +1,3 @@\n-slow()\n+fast()\n+cache()\n ok\n',
});

function setup(gh: FakeGitHub, extra: Record<string, unknown> = {}, tokens: string[] = [TOKEN]) {
  return testContext({
    tokens,
    config: { github: { baseUrl: gh.url, retryUnitMs: 1, concurrency: 2 }, collect: { listPerPage: 10 }, ...extra },
  });
}

describe('collect from GitHub (loopback server, real Octokit)', () => {
  let gh: FakeGitHub;
  afterEach(async () => {
    await gh.close();
  });

  describe('a repository with linked issues, pages and comments', () => {
    beforeEach(async () => {
      gh = await FakeGitHub.start({ repos: [repository([linkedPull])] });
    });

    it('collects every PR merged into the default branch in the window, following Link pages and stopping before older ones', async () => {
      const t = setup(gh);
      const report = await runStage(t.ctx, collectStage, testScope({ repos: [REPO] }));
      expect(report.failed).toEqual({});
      expect(report.done).toBe(26);
      const keys = t.ctx.ledger.list('collect').map((r) => r.key);
      expect(keys).toContain(`${REPO}#101`);
      expect(keys).not.toContain(`${REPO}#90`); // March
      expect(keys).not.toContain(`${REPO}#91`); // never merged
      expect(keys).not.toContain(`${REPO}#92`); // merged into maint
      // 29 closed PRs into main (sorted by updated desc, 10 a page): pages 1-3 hold April, page 3 ends in March: stop.
      const listPages = gh.requests((r) => r.path.startsWith(`/repos/${REPO}/pulls?`));
      expect(listPages.map((r) => new URL(r.path, gh.url).searchParams.get('page') ?? '1')).toEqual(['1', '2', '3']);
      expect(listPages[0]!.path).toContain('base=main');
      expect(listPages[0]!.path).toContain('sort=updated');
      expect(t.metrics.get('github.rateRemaining')).toBeGreaterThan(0);
      expect(t.metrics.get('github.rateRemaining')).toBeLessThan(5000);
      expect(t.logs.join('\n')).not.toContain(TOKEN);
    });

    it('fills the record: texts, dates, SHAs, files, diff, comments, past-only linked issues, asv config', async () => {
      const t = setup(gh);
      await runStage(t.ctx, collectStage, testScope({ repos: [REPO], prs: [101] }));
      const pr = loadPullRequest(t.db, REPO, 101)!;
      expect(pr).toMatchObject({
        title: 'Speed up parse()',
        labels: ['performance', 'parser'],
        author: 'alice',
        authorAssociation: 'MEMBER',
        createdAt: '2025-04-07T00:00:00.000Z',
        mergedAt: '2025-04-09T10:00:00.000Z',
        baseRef: 'main',
        mergedIntoDefault: true,
        baseSha: sha(101, 'base'),
        mergeSha: sha(101, 'merge'),
        headSha: sha(101, 'head'),
        additions: 3,
        deletions: 1,
        changedFiles: 2,
        source: 'github',
        missing: [],
        asvConfig: { path: 'benchmarks/asv.conf.json', text: '{"version": 1, "project": "fastlib"}\n' },
      });
      expect(pr.diff).toBe(linkedPull.diff);
      expect(pr.files.map((f) => [f.path, f.status, f.additions, f.deletions])).toEqual([
        ['pkg/parse.py', 'modified', 2, 1],
        ['pkg/new.py', 'added', 1, 0],
      ]);
      expect(pr.comments.map((c) => [c.kind, c.author, c.body, c.path])).toEqual([
        ['issue', 'bob', 'LGTM', null],
        ['review', 'bob', 'nit', 'pkg/parse.py'],
      ]);
      // #50 (closing keyword) and #51 (URL) existed before the PR; #52 is younger, #200 is a PR,
      // acme/elsewhere does not exist, #999 is in a code block.
      expect(pr.linkedIssues.map((i) => [i.number, i.via])).toEqual([
        [50, 'closing-keyword'],
        [51, 'url'],
      ]);
      expect(pr.linkedIssues[0]!.comments.map((c) => c.body)).toEqual(['profile attached']);
      expect(pr.linkedIssues[0]!.labels).toEqual(['performance']);
      expect(gh.requests((r) => r.path.startsWith('/repos/acme/fastlib/issues/999'))).toEqual([]);
      const output = t.ctx.ledger.get('collect', `${REPO}#101`)!.output as { contentHash: string; baseSha: string };
      expect(output.baseSha).toBe(sha(101, 'base'));
      expect(output.contentHash).toMatch(/^[0-9a-f]{64}$/);
    });

    it('re-running the same window sends only conditional requests (answered 304) and writes no new rows', async () => {
      const t = setup(gh);
      await runStage(t.ctx, collectStage, testScope({ repos: [REPO] }));
      const before = { prs: countRows(t.db, 'pull_requests'), items: countRows(t.db, 'stage_items'), cache: countRows(t.db, 'http_cache') };
      const ledgerBefore = JSON.stringify(t.ctx.ledger.list('collect'));
      gh.clearLog();
      const changes = () => (t.db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
      const changesBefore = changes();

      const again = await runStage(t.ctx, collectStage, testScope({ repos: [REPO] }));
      expect(again.ran).toBe(0);
      expect(again.reused).toBe(26);
      const requests = gh.requests();
      expect(requests.length).toBe(4); // the repository, then three list pages
      expect(requests.every((r) => r.conditional && r.status === 304)).toBe(true);
      expect(t.metrics.get('github.notModified')).toBe(4);
      expect({
        prs: countRows(t.db, 'pull_requests'),
        items: countRows(t.db, 'stage_items'),
        cache: countRows(t.db, 'http_cache'),
      }).toEqual(before);
      expect(JSON.stringify(t.ctx.ledger.list('collect'))).toBe(ledgerBefore);
      // Nothing at all is written: a 304 is answered from the cache without touching it.
      expect(changes() - changesBefore).toBe(0);
    });

    it('an updated pull request runs again, and only it', async () => {
      const t = setup(gh);
      await runStage(t.ctx, collectStage, testScope({ repos: [REPO] }));
      gh.updatePull(REPO, { ...linkedPull, updatedAt: '2025-05-02T00:00:00Z', title: 'Speed up parse() (edited)' });
      const again = await runStage(t.ctx, collectStage, testScope({ repos: [REPO] }));
      expect(again.ran).toBe(1);
      expect(loadPullRequest(t.db, REPO, 101)!.title).toBe('Speed up parse() (edited)');
    });

    it('fetches a pull request again when a setting that changes its record changes (comments, linked issues), not when the list is paged otherwise', async () => {
      const t = setup(gh);
      const scope = testScope({ repos: [REPO], prs: [101] });
      await runStage(t.ctx, collectStage, scope);
      const rerun = (collect: Record<string, unknown>) =>
        runStage(
          testContext({ tokens: [TOKEN], db: t.db, config: { github: { baseUrl: gh.url, retryUnitMs: 1, concurrency: 2 }, collect } }).ctx,
          collectStage,
          scope,
        );

      expect(await rerun({ listPerPage: 5, gitBatchSize: 7, gitWindowSlackDays: 3 })).toMatchObject({ planned: 1, ran: 0, reused: 1 });
      expect(await rerun({ listPerPage: 10, comments: false, maxLinkedIssues: 1 })).toMatchObject({ planned: 1, ran: 1, reused: 0 });
      const pr = loadPullRequest(t.db, REPO, 101)!;
      expect(pr.comments).toEqual([]);
      expect(pr.missing).toContain('comments');
      expect(pr.linkedIssues.map((i) => i.number)).toEqual([50]);
    });
  });

  it('follows a 301 for a renamed repository and records the items under the new name', async () => {
    gh = await FakeGitHub.start({ repos: [{ ...repository(), formerNames: ['acme/oldname'] }] });
    const t = setup(gh);
    const report = await runStage(t.ctx, collectStage, testScope({ repos: ['acme/oldname'] }));
    expect(report.done).toBe(25);
    expect(gh.requests((r) => r.status === 301).length).toBeGreaterThan(0);
    expect(t.ctx.ledger.list('collect').every((r) => r.key.startsWith(`${REPO}#`))).toBe(true);
  });

  it('handles a PR with more than 3,000 changed files: all 30 pages, the rest from the trees, the diff assembled', async () => {
    const base = sha(300, 'base');
    const merge = sha(300, 'merge');
    const files = Array.from({ length: 3500 }, (_, i) => ({
      filename: `data/f${String(i).padStart(4, '0')}.py`,
      status: 'added' as const,
      additions: 1,
      deletions: 0,
      patch: `@@ -0,0 +1 @@\n+v = ${i}`,
    }));
    const mergeTree: Record<string, string> = { 'asv.conf.json': '{}' };
    for (const [i, f] of files.entries()) mergeTree[f.filename] = `v = ${i}\n`;
    const big = pull(300, '2025-04-20T00:00:00Z', { files, baseSha: base, mergeSha: merge });
    gh = await FakeGitHub.start({ repos: [{ ...repository([big]), trees: { [base]: { 'asv.conf.json': '{}' }, [merge]: mergeTree } }] });
    const t = setup(gh);
    const report = await runStage(t.ctx, collectStage, testScope({ repos: [REPO], prs: [300] }));
    expect(report.failed).toEqual({});
    const pr = loadPullRequest(t.db, REPO, 300)!;
    expect(pr.changedFiles).toBe(3500);
    expect(new Set(pr.files.map((f) => f.path)).size).toBe(3500);
    expect(pr.files.filter((f) => f.additions === 1)).toHaveLength(3000);
    expect(pr.missing).toEqual(['files.lineCounts', 'diff.partial']);
    expect(gh.requests((r) => r.path.includes('/pulls/300/files')).length).toBe(30);
    expect(gh.requests((r) => r.path.includes('/compare/') && r.status === 406)).toHaveLength(1);
    expect(pr.diff.split('diff --git ').length - 1).toBe(3000);
  });

  it('survives a 403 secondary rate limit, a 429, a 502, a connection reset and a truncated JSON body', async () => {
    gh = await FakeGitHub.start({ repos: [repository([linkedPull])] });
    gh.inject({ path: `/repos/${REPO}/pulls/101`, fault: { kind: 'secondary-rate-limit', retryAfter: 1 } });
    gh.inject({ path: `/repos/${REPO}/pulls/101/files`, fault: { kind: 'status', status: 429 } });
    gh.inject({ path: `/repos/${REPO}/git/commits/`, fault: { kind: 'status', status: 502 } });
    gh.inject({ path: `/repos/${REPO}/issues/50`, fault: { kind: 'reset' } });
    gh.inject({ path: `/repos/${REPO}/pulls?`, fault: { kind: 'truncate' } });
    const t = setup(gh);
    const report = await runStage(t.ctx, collectStage, testScope({ repos: [REPO], prs: [101] }));
    expect(report.failed).toEqual({});
    expect(report.done).toBe(1);
    expect(gh.pendingFaults()).toBe(0);
    const faults = gh.requests((r) => r.fault !== null).map((r) => [r.fault, r.status]);
    expect(faults).toEqual(
      expect.arrayContaining([
        ['secondary-rate-limit', 403],
        ['status', 429],
        ['status', 502],
        ['reset', 0],
        ['truncate', 200],
      ]),
    );
    expect(loadPullRequest(t.db, REPO, 101)!.linkedIssues.map((i) => i.number)).toEqual([50, 51]);
    expect(t.metrics.get('github.secondaryRateLimited')).toBe(1);
    expect(t.metrics.get('github.badBodies')).toBe(1);
  });

  it('a 403 secondary limit answered with 429 and retry-after is honoured too', async () => {
    gh = await FakeGitHub.start({ repos: [repository([linkedPull])] });
    gh.inject({ path: `/repos/${REPO}/pulls/101`, fault: { kind: 'secondary-rate-limit', status: 429, retryAfter: 1 } });
    const t = setup(gh);
    const report = await runStage(t.ctx, collectStage, testScope({ repos: [REPO], prs: [101] }));
    expect(report.done).toBe(1);
    expect(t.metrics.get('github.secondaryRateLimited')).toBeGreaterThanOrEqual(1);
  });

  it('moves to the next token when x-ratelimit-remaining says the current one is spent, and never logs a token', async () => {
    const other = 'ghp_second_token_bbbbbbbbbbbbbbb';
    gh = await FakeGitHub.start({ repos: [repository([linkedPull])], tokenBudgets: { [TOKEN]: 5 } });
    const t = setup(gh, { github: { baseUrl: gh.url, retryUnitMs: 1, concurrency: 1 } }, [TOKEN, other]);
    const report = await runStage(t.ctx, collectStage, testScope({ repos: [REPO], prs: [101] }));
    expect(report.done).toBe(1);
    const used = gh.requests().map((r) => r.token);
    expect(used.slice(0, 5)).toEqual(Array(5).fill(TOKEN));
    expect(new Set(used.slice(5))).toEqual(new Set([other]));
    expect(gh.requests((r) => r.status === 403)).toHaveLength(0);
    expect(t.metrics.get('github.tokenRotations')).toBe(1);
    const logs = t.logs.join('\n');
    expect(logs).toContain('rotating to the next token');
    expect(logs).not.toContain(TOKEN);
    expect(logs).not.toContain(other);
  });

  it('retries at once with the next token when GitHub answers a primary rate limit (403, remaining 0)', async () => {
    const other = 'ghp_second_token_bbbbbbbbbbbbbbb';
    gh = await FakeGitHub.start({ repos: [repository([linkedPull])] });
    gh.inject({ path: `/repos/${REPO}/pulls/101`, fault: { kind: 'rate-limit' } });
    const t = setup(gh, { github: { baseUrl: gh.url, retryUnitMs: 1, concurrency: 1 } }, [TOKEN, other]);
    const report = await runStage(t.ctx, collectStage, testScope({ repos: [REPO], prs: [101] }));
    expect(report.done).toBe(1);
    const pullRequests = gh.requests((r) => r.path === `/repos/${REPO}/pulls/101`);
    expect(pullRequests.map((r) => [r.status, r.token])).toEqual([
      [403, TOKEN],
      [200, other],
    ]);
    expect(t.metrics.get('github.tokensExhausted')).toBe(1);
  });

  it('fails the item with github-rate-limited when every token is spent and the reset is too far', async () => {
    gh = await FakeGitHub.start({ repos: [repository([linkedPull])], tokenBudgets: { [TOKEN]: 4 }, resetAfterSeconds: 3600 });
    const t = setup(gh, { github: { baseUrl: gh.url, retryUnitMs: 1, maxRateLimitWaitSeconds: 60 } });
    const report = await runStage(t.ctx, collectStage, testScope({ repos: [REPO], prs: [101] }));
    expect(report.failed).toEqual({ 'github-rate-limited': 1 });
    expect(report.failedKinds).toEqual({ 'outside-service': 1 });
  });

  it('records a deleted repository and a deleted pull request with named reasons', async () => {
    gh = await FakeGitHub.start({ repos: [repository([linkedPull])] });
    const t = setup(gh);
    const first = await runStage(t.ctx, collectStage, testScope({ repos: [REPO, 'acme/deleted'], prs: [101] }));
    expect(first.dropped).toEqual({ 'repo-not-found': 1 });
    expect(t.ctx.ledger.get('collect', 'acme/deleted')).toMatchObject({
      status: 'dropped',
      reason: 'repo-not-found',
      repo: 'acme/deleted',
    });
    // The PR disappears between plan and run: the repository loses it.
    gh.inject({ path: `/repos/${REPO}/pulls/101`, fault: { kind: 'status', status: 404, body: { message: 'Not Found' } } });
    const second = await runStage(t.ctx, collectStage, testScope({ repos: [REPO], prs: [101] }), { force: true });
    expect(second.dropped).toEqual({ 'pr-not-found': 1 });
    expect(gh.requests((r) => r.path === '/repos/acme/elsewhere/issues/7')).toHaveLength(1); // a 404 is never retried
  });

  it('a request that never answers fails the item with github-timeout after the configured timeout', async () => {
    gh = await FakeGitHub.start({ repos: [repository([linkedPull])] });
    gh.inject({ path: `/repos/${REPO}/pulls/101`, fault: { kind: 'hang' } });
    const t = setup(gh, { github: { baseUrl: gh.url, retryUnitMs: 1, timeoutMs: 3_000, retries: 0 } });
    const report = await runStage(t.ctx, collectStage, testScope({ repos: [REPO], prs: [101] }));
    expect(report.failed).toEqual({ 'github-timeout': 1 });
  });

  it('without a token, the stage stops before any item and names the variable', async () => {
    gh = await FakeGitHub.start({ repos: [repository()] });
    const t = setup(gh, {}, []);
    await expect(runStage(t.ctx, collectStage, testScope({ repos: [REPO] }))).rejects.toThrow(/GITHUB_TOKEN: not set/);
    expect(gh.requests()).toHaveLength(0);
  });
});
