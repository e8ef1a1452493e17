import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRepos } from '../fakes/github-data.js';
import { FakeGitHub } from '../fakes/github-server.js';
import { tempDir } from '../helpers/harness.js';
import { count, doneKeys, killPoint, LEDGER, runToEnd, snapshot, startCli, type RunningCli, type TableSpec } from './kill.js';

const TOKEN = 'ghp_kill_test_token_0123456789';
// Chosen so that the kill points fall in the plan (the first request), among the first
// repository's items, and among the last items.
const SEEDS = [7, 12, 4];
const TABLES: readonly TableSpec[] = [
  LEDGER,
  { table: 'pull_requests' },
  { table: 'asv_configs', omit: ['checked_at'] },
  { table: 'http_cache', omit: ['stored_at', 'validated_at'] },
];

/**
 * SIGKILL of `perfmine stage collect` (GitHub source, loopback GitHub) at a seeded request: the
 * k-th request the server receives is held unanswered and the CLI's process group is killed
 * while it waits. The rerun must end with the rows of an uninterrupted run, and must not ask
 * GitHub again about pull requests recorded before the kill.
 */
describe('SIGKILL during collect from GitHub', () => {
  let gh: FakeGitHub;
  let dir: string;
  let configFile: string;
  let referenceDb: string;
  let referenceRequests = 0;
  const env = { GITHUB_TOKEN: TOKEN, PERFMINE_LOG_FORMAT: 'json', PERFMINE_LOG_LEVEL: 'warn' };
  const args = (db: string) => [
    '--db',
    db,
    '--config',
    configFile,
    'stage',
    'collect',
    '--month',
    '2025-04',
    '--repo',
    'org0/project0',
    '--repo',
    'org1/project1',
    '--json',
  ];

  beforeAll(async () => {
    dir = tempDir('perfmine-kill-gh-');
    gh = await FakeGitHub.start({
      repos: syntheticRepos(2, {
        pulls: 5,
        mergedFrom: '2025-04-01T00:00:00Z',
        mergedTo: '2025-05-01T00:00:00Z',
        filesPerPull: 2,
        issueEvery: 2,
      }),
    });
    configFile = join(dir, 'perfmine.config.json');
    // One request at a time: the k-th request is the same one in every run.
    writeFileSync(configFile, JSON.stringify({ github: { baseUrl: gh.url, retryUnitMs: 1, concurrency: 1 }, collect: { listPerPage: 4 } }));
    referenceDb = join(dir, 'reference.db');
    let seen = 0;
    gh.onRequest(() => {
      seen += 1;
      return null;
    });
    const reference = await runToEnd(args(referenceDb), { env });
    gh.onRequest(null);
    expect(reference.code, reference.stderr).toBe(0);
    expect(JSON.parse(reference.stdout).stages[0]).toMatchObject({ done: 10, failed: {} });
    referenceRequests = seen;
    expect(referenceRequests).toBeGreaterThan(40);
  }, 120_000);

  afterAll(async () => {
    await gh?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const seed of SEEDS) {
    it(`seed ${seed}: the rerun after the kill gives the rows of an uninterrupted run and asks nothing already recorded`, async () => {
      const k = killPoint(seed, referenceRequests);
      const db = join(dir, `crashed-${seed}.db`);
      let seen = 0;
      let held: string | null = null;
      // Armed before the CLI starts (it is assigned synchronously, before any request can arrive).
      let cli: RunningCli | undefined;
      gh.onRequest((r) => {
        seen += 1;
        if (seen !== k) return null;
        held = r.path;
        cli!.kill();
        return { kind: 'hang' };
      });
      cli = startCli(args(db), { env });
      const killed = await cli.done;
      gh.onRequest(null);
      expect(killed.signal).toBe('SIGKILL');
      expect(held).not.toBeNull();

      // What the crash left: a run still marked running, and whatever was committed before it.
      expect(count(db, "SELECT COUNT(*) AS n FROM runs WHERE status = 'running'")).toBe(1);
      const doneBefore = doneKeys(db, 'collect').map((key) => {
        const [repo, number] = key.split('#') as [string, string];
        return { repo, number: Number(number) };
      });

      const cachedBefore = new Set(
        Object.values(snapshot(db, [{ table: 'http_cache' }]))[0]!.map((line) => {
          const url = new URL((JSON.parse(line) as { url: string }).url);
          return `${url.pathname}${url.search}`;
        }),
      );
      gh.clearLog();
      const rerun = await runToEnd(args(db), { env });
      expect(rerun.code, rerun.stderr).toBe(0);
      const report = JSON.parse(rerun.stdout).stages[0];
      expect(report).toMatchObject({ planned: 10, reused: doneBefore.length, ran: 10 - doneBefore.length, done: 10, failed: {} });

      expect(snapshot(db, TABLES)).toEqual(snapshot(referenceDb, TABLES));
      expect(count(db, 'SELECT COUNT(*) AS n FROM runs')).toBe(2);
      expect(count(db, "SELECT COUNT(*) AS n FROM runs WHERE status = 'crashed'")).toBe(1);
      // Nothing about a pull request recorded before the kill is asked again, and what is in the
      // HTTP cache is asked conditionally (answered 304, at no rate-limit cost).
      for (const { repo, number } of doneBefore) {
        expect(
          gh.requests(
            (q) => q.path.startsWith(`/repos/${repo}/pulls/${number}`) || q.path.startsWith(`/repos/${repo}/issues/${number - 1}`),
          ),
        ).toEqual([]);
      }
      expect(gh.requests((q) => cachedBefore.has(q.path) && !q.conditional)).toEqual([]);
      if (cachedBefore.size > 0) expect(gh.requests((q) => q.conditional && q.status === 304).length).toBeGreaterThan(0);
    }, 120_000);
  }
});
