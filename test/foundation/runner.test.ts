import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { needsRun, runStage } from '../../pipeline/runner.js';
import { monthWindow } from '../../pipeline/window.js';
import type { Scope } from '../../pipeline/scope.js';
import type { LedgerRow } from '../../cache/ledger.js';
import { countingStage } from './fixtures/counting-stage.js';
import { collect, runCli, spawnNode, tempDir, waitForLine } from '../helpers/index.js';
import { harness } from '../helpers/harness.js';

const scope: Scope = { window: monthWindow('2025-04'), repos: [], prs: [], source: { kind: 'github' } };
const TEST_CLI = new URL('./fixtures/test-cli.ts', import.meta.url).pathname;

function rowsOf(db: Database.Database) {
  return {
    rows: db.prepare('SELECT key, value FROM test_rows ORDER BY key, value').all(),
    ledger: db
      .prepare(
        'SELECT stage, key, repo, at, status, reason, detail, input_hash, stage_version, output FROM stage_items ORDER BY stage, key',
      )
      .all(),
  };
}

describe('needsRun', () => {
  const row = (over: Partial<LedgerRow>): LedgerRow => ({
    stage: 'collect',
    key: 'k',
    repo: null,
    at: null,
    status: 'done',
    reason: null,
    detail: null,
    errorKind: null,
    lastError: null,
    attempts: 1,
    inputHash: 'h',
    stageVersion: 1,
    output: undefined,
    runId: null,
    updatedAt: '',
    ...over,
  });
  it('runs new, failed, pending, changed and forced items; skips decided unchanged ones', () => {
    expect(needsRun(undefined, 'h', 1, false)).toBe(true);
    expect(needsRun(row({}), 'h', 1, false)).toBe(false);
    expect(needsRun(row({ status: 'dropped' }), 'h', 1, false)).toBe(false);
    expect(needsRun(row({ status: 'failed' }), 'h', 1, false)).toBe(true);
    expect(needsRun(row({ status: 'pending' }), 'h', 1, false)).toBe(true);
    expect(needsRun(row({}), 'other', 1, false)).toBe(true);
    expect(needsRun(row({}), 'h', 2, false)).toBe(true);
    expect(needsRun(row({}), 'h', 1, true)).toBe(true);
  });
});

describe('runStage (in process, real SQLite)', () => {
  it('records a failing item and completes the others', async () => {
    const { ctx, db } = harness();
    const report = await runStage(ctx, countingStage({ count: 12, failAt: [3, 7] }), scope);
    expect(report).toMatchObject({
      planned: 12,
      ran: 12,
      done: 8,
      dropped: { 'multiple-of-five': 2 },
      failed: { 'test-failure': 2 },
      failedKinds: { item: 2 },
    });
    const failed = ctx.ledger.list('collect', { statuses: ['failed'] });
    expect(failed.map((r) => r.key)).toEqual(['t/r#3', 't/r#7']);
    expect(failed[0]).toMatchObject({ errorKind: 'item', reason: 'test-failure', lastError: 'item 3 fails on purpose', attempts: 1 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM test_rows').get()).toEqual({ n: 10 });
  });

  it('skips decided items on a rerun, retries failed ones, and reruns all with force', async () => {
    const { ctx, db } = harness();
    await runStage(ctx, countingStage({ count: 10, failAt: [4] }), scope);
    const again = await runStage(ctx, countingStage({ count: 10 }), scope);
    expect(again).toMatchObject({ planned: 10, reused: 9, ran: 1, done: 8, failed: {} });
    expect(ctx.ledger.get('collect', 't/r#4')).toMatchObject({ status: 'done', attempts: 2, lastError: null });
    expect(db.prepare('SELECT COUNT(*) AS n FROM test_rows').get()).toEqual({ n: 10 });

    const forced = await runStage(ctx, countingStage({ count: 10 }), scope, { force: true });
    expect(forced).toMatchObject({ reused: 0, ran: 10 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM test_rows').get()).toEqual({ n: 20 });
  });

  it('reruns every item when the stage version changes, and only changed items when inputs change', async () => {
    const { ctx } = harness();
    await runStage(ctx, countingStage({ count: 6 }), scope);
    expect(await runStage(ctx, countingStage({ count: 6, version: 2 }), scope)).toMatchObject({ ran: 6, reused: 0 });
    expect(ctx.ledger.get('collect', 't/r#1')?.stageVersion).toBe(2);
    expect(await runStage(ctx, countingStage({ count: 6, version: 2 }), scope)).toMatchObject({ ran: 0, reused: 6 });
    expect(await runStage(ctx, countingStage({ count: 6, version: 2, salt: 'x' }), scope)).toMatchObject({ ran: 6 });
  });

  it('a dry run counts what would run and writes nothing', async () => {
    const { ctx, db } = harness();
    await runStage(ctx, countingStage({ count: 4 }), scope);
    const dry = await runStage(ctx, countingStage({ count: 7 }), scope, { dryRun: true });
    expect(dry).toMatchObject({ planned: 7, reused: 4, ran: 0, wouldRun: 3 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM stage_items').get()).toEqual({ n: 4 });
  });

  it('stops scheduling when drained and leaves the rest pending', async () => {
    const drain = new AbortController();
    const { ctx } = harness({ config: { github: { concurrency: 1 } } });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const stage = countingStage({
      count: 8,
      blockAt: 3,
      gate,
      onBlocked: () => {
        drain.abort();
        release();
      },
    });
    const report = await runStage(ctx, stage, scope, { drain: drain.signal });
    expect(report).toMatchObject({ ran: 3, notStarted: 5 });
    expect(ctx.ledger.list('collect', { statuses: ['pending'] })).toHaveLength(5);
  });
});

describe('runStage with a stage that decides in batches (runBatch)', () => {
  /** Ledger rows without the times and run ids, which differ between two runs by construction. */
  const decisions = (db: Database.Database) =>
    db
      .prepare(
        'SELECT key, status, reason, detail, error_kind, last_error, attempts, input_hash, stage_version, output FROM stage_items ORDER BY key',
      )
      .all();

  it('records the same rows and ledger as the item path, in chunks of the batch size', async () => {
    const byItem = harness();
    const byBatch = harness();
    const chunks: number[][] = [];
    await runStage(byItem.ctx, countingStage({ count: 11, failAt: [3] }), scope);
    const report = await runStage(
      byBatch.ctx,
      countingStage({ count: 11, failAt: [3], batch: true, onChunk: (c) => chunks.push(c) }),
      scope,
      { batchSize: 4 },
    );
    expect(report).toMatchObject({ planned: 11, ran: 11, done: 8, dropped: { 'multiple-of-five': 2 }, failed: { 'test-failure': 1 } });
    expect(chunks).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
      [9, 10, 11],
    ]);
    expect(decisions(byBatch.db)).toEqual(decisions(byItem.db));
    expect(rowsOf(byBatch.db).rows).toEqual(rowsOf(byItem.db).rows);
  });

  it('leaves no row pending or stale when inputs, versions and decisions change between runs', async () => {
    const byItem = harness();
    const byBatch = harness();
    const runs = [
      { count: 12 },
      { count: 12, failAt: [2] }, // nothing changed: reused, nothing runs
      { count: 12, salt: 'x', dropEvery: 3 }, // every input changed (pending after plan); done <-> dropped flips
      { count: 12, salt: 'x', dropEvery: 3, version: 2, failAt: [4] }, // a new version; one fails
      { count: 12, salt: 'x', dropEvery: 4, version: 2 }, // the failed one runs again; forced below
    ];
    for (const [i, options] of runs.entries()) {
      const force = i === runs.length - 1;
      const a = await runStage(byItem.ctx, countingStage(options), scope, { force });
      const b = await runStage(byBatch.ctx, countingStage({ ...options, batch: true }), scope, { force, batchSize: 5 });
      expect({ ...b, durationMs: 0 }, `run ${i}`).toEqual({ ...a, durationMs: 0 });
      expect(decisions(byBatch.db), `run ${i}`).toEqual(decisions(byItem.db));
      // Every item was decided: none is left pending (as `plan` put the changed ones), on either path.
      for (const h of [byItem, byBatch])
        expect(
          h.ctx.ledger.list('collect', { statuses: ['pending'] }).map((r) => r.key),
          `run ${i}`,
        ).toEqual([]);
    }
    expect(byBatch.ctx.ledger.get('collect', 't/r#4')).toMatchObject({ status: 'dropped', reason: 'multiple-of-4', attempts: 4 });
    // the statuses of named items in one statement: those of `list`, a key without a row left out
    const rows = byBatch.ctx.ledger.list('collect');
    const statuses = byBatch.ctx.ledger.statuses('collect', [...rows.map((r) => r.key), 't/r#999']);
    expect(statuses).toEqual(new Map(rows.map((r) => [r.key, r.status])));
    expect(statuses.get('t/r#4')).toBe('dropped');
  });

  it('fails every item of a chunk whose batch throws, and as a bug an item the batch gave no result for', async () => {
    const { ctx } = harness();
    const report = await runStage(ctx, countingStage({ count: 9, batch: true, throwChunkWith: [5], omit: [8] }), scope, { batchSize: 3 });
    expect(report).toMatchObject({
      ran: 9,
      done: 5,
      failed: { 'chunk-failure': 3, 'no-batch-result': 1 },
      failedKinds: { item: 3, internal: 1 },
    });
    expect(ctx.ledger.list('collect', { statuses: ['failed'] }).map((r) => [r.key, r.reason])).toEqual([
      ['t/r#4', 'chunk-failure'],
      ['t/r#5', 'chunk-failure'],
      ['t/r#6', 'chunk-failure'],
      ['t/r#8', 'no-batch-result'],
    ]);
  });

  it('starts no chunk once drained: the rest stays pending', async () => {
    const drain = new AbortController();
    const { ctx } = harness();
    const report = await runStage(ctx, countingStage({ count: 10, batch: true, onChunk: () => drain.abort() }), scope, {
      drain: drain.signal,
      batchSize: 4,
    });
    expect(report).toMatchObject({ ran: 4, notStarted: 6 });
    expect(ctx.ledger.list('collect', { statuses: ['pending'] })).toHaveLength(6);
  });
});

describe('runner through the CLI in a child process', () => {
  const window = ['--since', '2025-04-01', '--until', '2025-05-01'];

  it('a SIGKILL mid-run loses nothing and doubles nothing: the rerun gives the rows of an uninterrupted run', async () => {
    const dir = tempDir();
    const reference = join(dir, 'reference.db');
    const crashed = join(dir, 'crashed.db');
    const env = { COUNT: '20', FAIL_AT: '', PERFMINE_GITHUB_CONCURRENCY: '1' };

    const clean = await collect(spawnNode(TEST_CLI, ['stage', 'collect', '--db', reference, ...window], { env }));
    expect(clean.code).toBe(0);

    const child = spawnNode(TEST_CLI, ['stage', 'collect', '--db', crashed, ...window], { env: { ...env, BLOCK_AT: '9' } });
    const done = collect(child);
    await waitForLine(child.stdout, /^blocked 9$/);
    child.kill('SIGKILL');
    const killed = await done;
    expect(killed.signal).toBe('SIGKILL');

    const mid = new Database(crashed, { readonly: true });
    const decided = mid.prepare("SELECT COUNT(*) AS n FROM stage_items WHERE status IN ('done', 'dropped')").get() as { n: number };
    const running = mid.prepare('SELECT status FROM runs').all();
    mid.close();
    // Items 1-8 finished; 9 was in flight; 10-20 never started. Results are group-committed, so
    // at most the 8 finished ones are durable; whatever was not committed runs again.
    expect(decided.n).toBeLessThanOrEqual(8);
    expect(running).toEqual([{ status: 'running' }]);

    const rerun = await collect(spawnNode(TEST_CLI, ['stage', 'collect', '--db', crashed, ...window, '--json'], { env }));
    expect(rerun.code).toBe(0);
    expect(JSON.parse(rerun.stdout).stages[0]).toMatchObject({ reused: decided.n, ran: 20 - decided.n });

    const a = new Database(reference, { readonly: true });
    const b = new Database(crashed, { readonly: true });
    expect(rowsOf(b)).toEqual(rowsOf(a));
    expect(b.prepare('SELECT status FROM runs ORDER BY id').all()).toEqual([{ status: 'crashed' }, { status: 'succeeded' }]);
    a.close();
    b.close();
    // three CLI processes through tsx: over 60 s on this 2-core machine with two other suites running
  }, 180_000);

  it('exits 1 when items failed, records them, and 0 once they pass', async () => {
    const db = join(tempDir(), 'p.db');
    const failing = await collect(spawnNode(TEST_CLI, ['stage', 'collect', '--db', db, ...window], { env: { COUNT: '6', FAIL_AT: '2' } }));
    expect(failing.code).toBe(1);
    expect(failing.stdout).toMatch(/failed:\s+test-failure 1/);
    const status = await runCli(['status', '--db', db, '--stage', 'collect', '--items', '--json']);
    const items = JSON.parse(status.stdout).items as { key: string; status: string; reason: string | null }[];
    expect(items.find((i) => i.key === 't/r#2')).toMatchObject({ status: 'failed', reason: 'test-failure' });
    const fixed = await collect(spawnNode(TEST_CLI, ['stage', 'collect', '--db', db, ...window], { env: { COUNT: '6' } }));
    expect(fixed.code).toBe(0);
  });

  it('first SIGINT lets the in-flight item finish and starts nothing new; the rerun resumes', async () => {
    const db = join(tempDir(), 'p.db');
    const env = { COUNT: '10', PERFMINE_GITHUB_CONCURRENCY: '1', BLOCK_AT: '4' };
    const child = spawnNode(TEST_CLI, ['stage', 'collect', '--db', db, ...window], { env });
    const done = collect(child);
    await waitForLine(child.stdout, /^blocked 4$/);
    const stopping = waitForLine(child.stderr, /stopping: in-flight items will finish/);
    child.kill('SIGINT');
    await stopping;
    child.stdin.write('go\n');
    const result = await done;
    expect(result.code).toBe(130);
    const d = new Database(db, { readonly: true });
    expect(d.prepare("SELECT COUNT(*) AS n FROM stage_items WHERE status IN ('done','dropped')").get()).toEqual({ n: 4 });
    expect(d.prepare("SELECT COUNT(*) AS n FROM stage_items WHERE status = 'pending'").get()).toEqual({ n: 6 });
    expect(d.prepare('SELECT status, exit_code FROM runs').all()).toEqual([{ status: 'interrupted', exit_code: 130 }]);
    d.close();
    const resumed = await collect(spawnNode(TEST_CLI, ['stage', 'collect', '--db', db, ...window, '--json'], { env: { COUNT: '10' } }));
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout).stages[0]).toMatchObject({ reused: 4, ran: 6 });
  });

  it('a second SIGINT stops at once and marks the run interrupted', async () => {
    const db = join(tempDir(), 'p.db');
    const child = spawnNode(TEST_CLI, ['stage', 'collect', '--db', db, ...window], {
      env: { COUNT: '10', PERFMINE_GITHUB_CONCURRENCY: '1', BLOCK_AT: '2' },
    });
    const done = collect(child);
    await waitForLine(child.stdout, /^blocked 2$/);
    const stopping = waitForLine(child.stderr, /stopping: in-flight/);
    child.kill('SIGINT');
    await stopping;
    child.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(130);
    const d = new Database(db, { readonly: true });
    expect(d.prepare('SELECT status FROM runs').all()).toEqual([{ status: 'interrupted' }]);
    expect(d.prepare("SELECT status FROM stage_items WHERE key = 't/r#2'").get()).toEqual({ status: 'pending' });
    d.close();
  });

  it('a second perfmine on the same database refuses while the first runs, and proceeds once it is gone', async () => {
    const db = join(tempDir(), 'p.db');
    const first = spawnNode(TEST_CLI, ['stage', 'collect', '--db', db, ...window], { env: { COUNT: '5', BLOCK_AT: '1' } });
    const firstDone = collect(first);
    await waitForLine(first.stdout, /^blocked 1$/);
    const second = await runCli(['run', '--db', db, '--month', '2025-04']);
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/another perfmine \(stage collect, pid \d+ on .+, started .+\) is using this database/);
    expect(second.stderr).toMatch(/fix: wait for it to finish, or point --db at another file/);
    first.kill('SIGKILL');
    await firstDone;
    const third = await collect(spawnNode(TEST_CLI, ['stage', 'collect', '--db', db, ...window], { env: { COUNT: '5' } }));
    expect(third.stderr).not.toMatch(/another perfmine/);
    expect(third.code).toBe(0);
  });
});
