import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha, syntheticFiles } from '../fakes/github-data.js';
import { retryAfterSeconds } from '../../pipeline/services/github-fetch.js';
import { FakeGitHub, type FakePull, type FaultRule } from '../fakes/github-server.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/harness.js';
import { runToEnd } from './kill.js';

const REPO = 'acme/fastlib';
const TOKEN = 'ghp_faults_token_abcdefghijklmnop';

function pull(number: number): FakePull {
  const merged = `2025-04-${String(number - 190).padStart(2, '0')}T12:00:00Z`;
  return {
    number,
    title: `Speed up part ${number}`,
    body: 'Faster.',
    createdAt: '2025-04-01T00:00:00Z',
    updatedAt: merged,
    mergedAt: merged,
    headSha: sha(number, 'head'),
    mergeSha: sha(number, 'merge'),
    baseSha: sha(number, 'base'),
    files: () => syntheticFiles(REPO, number, 2),
  };
}

interface Item {
  readonly key: string;
  readonly status: string;
  readonly reason: string | null;
}

/**
 * GitHub failures through the real CLI (`perfmine stage collect`) against the loopback GitHub:
 * each pull request meets one fault. Transient ones are retried and the item is done; lasting
 * ones are recorded with a named reason; the run goes on and exits 1 because items failed.
 * Waits are shortened by `github.retryUnitMs`, never by sleeping.
 */
describe('GitHub faults through perfmine stage collect', () => {
  let gh: FakeGitHub;
  let dir: string;
  let db: string;
  let items: Map<string, Item>;
  let summary: { exitCode: number; stages: { done: number; dropped: Record<string, number>; failed: Record<string, number> }[] };
  let stderr: string;

  const once: FaultRule[] = [
    { path: /\/pulls\/201$/, fault: { kind: 'secondary-rate-limit', status: 403, retryAfter: 2 } },
    {
      path: /\/pulls\/202\/files/,
      fault: { kind: 'status', status: 429, headers: { 'retry-after': '2' }, body: { message: 'Too many requests' } },
    },
    { path: /\/git\/commits\/[0-9a-f]+$/, fault: { kind: 'status', status: 500 } },
    { path: /\/compare\//, fault: { kind: 'status', status: 502 } },
    { path: /\/pulls\/205$/, fault: { kind: 'status', status: 503 } },
    { path: /\/pulls\/206\/files/, fault: { kind: 'reset' } },
    { path: /\/pulls\/207$/, fault: { kind: 'truncate' } },
    { path: /\/pulls\?/, fault: { kind: 'truncate' } },
  ];

  beforeAll(async () => {
    dir = tempDir('perfmine-gh-faults-');
    gh = await FakeGitHub.start({
      repos: [
        {
          fullName: REPO,
          formerNames: ['acme/oldname'],
          files: { 'asv.conf.json': '{"version": 1}\n', 'fastlib/core.py': 'x = 1\n' },
          pulls: Array.from({ length: 13 }, (_, i) => pull(201 + i)),
        },
      ],
    });
    for (const rule of once) gh.inject(rule);
    // Lasting faults: more than every retry.
    gh.inject({ path: /\/pulls\/208$/, times: 50, fault: { kind: 'status', status: 502 } });
    gh.inject({ path: /\/pulls\/209$/, fault: { kind: 'status', status: 404, body: { message: 'Not Found' } } });
    gh.inject({ path: /\/pulls\/210$/, times: 50, fault: { kind: 'secondary-rate-limit', status: 403, retryAfter: 1 } });
    gh.inject({ path: /\/pulls\/211$/, times: 50, fault: { kind: 'hang' } });
    gh.inject({
      path: /\/pulls\/212\/files/,
      fault: { kind: 'status', status: 429, headers: { 'retry-after': '3600' }, body: { message: 'Too many requests' } },
    });

    const config = join(dir, 'perfmine.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        github: {
          baseUrl: gh.url,
          retryUnitMs: 1,
          timeoutMs: 3_000,
          retries: 2,
          secondaryRateLimitRetries: 2,
          maxRateLimitWaitSeconds: 60,
          concurrency: 2,
        },
      }),
    );
    db = join(dir, 'perfmine.db');
    const env = { GITHUB_TOKEN: TOKEN, PERFMINE_LOG_FORMAT: 'json', PERFMINE_LOG_LEVEL: 'info' };
    // The repository under its old name (GitHub answers 301), and one that was deleted.
    const run = await runToEnd(
      [
        '--db',
        db,
        '--config',
        config,
        '--json',
        'stage',
        'collect',
        '--month',
        '2025-04',
        '--repo',
        'acme/oldname',
        '--repo',
        'acme/deleted',
      ],
      { env },
    );
    summary = JSON.parse(run.stdout);
    stderr = run.stderr;
    expect(run.code, run.stderr).toBe(1);
    const status = await runCli(['--db', db, 'status', '--stage', 'collect', '--items', '--json']);
    expect(status.code).toBe(0);
    items = new Map((JSON.parse(status.stdout).items as Item[]).map((i) => [i.key, i]));
  }, 120_000);

  afterAll(async () => {
    await gh?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const key = (n: number) => `${REPO}#${n}`;
  const paths = (re: RegExp) => gh.requests((r) => re.test(r.path)).map((r) => r.status);

  it('exits 1, and the summary counts what was done, dropped and failed, by reason', () => {
    expect(summary.exitCode).toBe(1);
    expect(summary.stages[0]).toMatchObject({
      done: 8,
      dropped: { 'pr-not-found': 1, 'repo-not-found': 1 },
      failed: { 'github-server-error': 1, 'github-rate-limited': 2, 'github-timeout': 1 },
    });
    expect(stderr).not.toContain(TOKEN);
  });

  it('retries a secondary rate limit (403), 500, 502, 503, a connection reset and truncated JSON, and the items are done', () => {
    for (const n of [201, 202, 203, 204, 205, 206, 207, 213])
      expect(items.get(key(n)), `#${n}`).toMatchObject({ status: 'done', reason: null });
    expect(paths(/\/pulls\/201$/)).toEqual([403, 200]);
    expect(paths(/\/pulls\/205$/)).toEqual([503, 200]);
    expect(paths(/\/pulls\/206\/files/)).toEqual([0, 200]);
    expect(paths(/\/pulls\/207$/)).toEqual([200, 200]);
    expect(gh.requests((r) => r.fault === 'truncate' && r.path.includes('/pulls?'))).toHaveLength(1);
    expect(gh.requests((r) => /\/git\/commits\//.test(r.path) && r.status === 500)).toHaveLength(1);
    expect(gh.requests((r) => /\/compare\//.test(r.path) && r.status === 502)).toHaveLength(1);
  });

  it('honours a 429 with retry-after: retried after it when short, recorded as rate-limited without retrying when longer than allowed', () => {
    expect(paths(/\/pulls\/202\/files/)).toEqual([429, 200]);
    const waits = stderr
      .split('\n')
      .filter((l) => l.includes('GitHub answered 429'))
      .map((l) => JSON.parse(l) as { path: string; retryAfterSeconds: number; msg: string });
    expect(waits).toEqual([
      expect.objectContaining({
        path: `/repos/${REPO}/pulls/202/files`,
        retryAfterSeconds: 2,
        msg: 'GitHub answered 429; waiting as told',
      }),
      expect.objectContaining({
        path: `/repos/${REPO}/pulls/212/files`,
        retryAfterSeconds: 3600,
        msg: 'GitHub answered 429 with a retry-after longer than allowed; not waiting',
      }),
    ]);
    expect(items.get(key(212))).toMatchObject({ status: 'failed', reason: 'github-rate-limited' });
    expect(paths(/\/pulls\/212\/files/)).toEqual([429]);
  });

  it('records lasting failures with named reasons after bounded retries', () => {
    expect(items.get(key(208))).toMatchObject({ status: 'failed', reason: 'github-server-error' });
    expect(paths(/\/pulls\/208$/)).toEqual([502, 502, 502]);
    expect(items.get(key(210))).toMatchObject({ status: 'failed', reason: 'github-rate-limited' });
    expect(paths(/\/pulls\/210$/)).toEqual([403, 403, 403]);
    expect(items.get(key(211))).toMatchObject({ status: 'failed', reason: 'github-timeout' });
    expect(paths(/\/pulls\/211$/)).toHaveLength(3);
  });

  it('drops a pull request deleted between plan and run, and a deleted repository, with named reasons', () => {
    expect(items.get(key(209))).toMatchObject({ status: 'dropped', reason: 'pr-not-found' });
    expect(items.get('acme/deleted')).toMatchObject({ status: 'dropped', reason: 'repo-not-found' });
    expect(paths(/^\/repos\/acme\/deleted$/)).toEqual([404]);
  });

  it('follows the 301 of a renamed repository and records the items under the new name', () => {
    expect(paths(/^\/repos\/acme\/oldname$/)).toEqual([301]);
    expect([...items.keys()].filter((k) => k.startsWith('acme/oldname'))).toEqual([]);
    expect([...items.keys()].filter((k) => k.startsWith(`${REPO}#`))).toHaveLength(13);
  });
});

describe('retryAfterSeconds', () => {
  it('reads seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2025-04-01T00:00:00Z');
    expect(retryAfterSeconds('7', now)).toBe(7);
    expect(retryAfterSeconds('Tue, 01 Apr 2025 00:01:00 GMT', now)).toBe(60);
    expect(retryAfterSeconds('Mon, 31 Mar 2025 00:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds('soon', now)).toBeNull();
    expect(retryAfterSeconds(null, now)).toBeNull();
  });
});
