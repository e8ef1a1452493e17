import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../../cache/store.js';
import { Ledger } from '../../cache/ledger.js';
import { formatFunnel } from '../../pipeline/cli/commands/status.js';
import { funnel } from '../../pipeline/report/funnel.js';
import { runCli, tempDir } from '../helpers/index.js';

describe('perfmine status', () => {
  it('works on a database that does not exist yet, without creating it', async () => {
    const dir = tempDir();
    const db = join(dir, 'none.db');
    const text = await runCli(['status', '--db', db]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/no database at .*none\.db yet: nothing has run/);
    const json = await runCli(['status', '--db', db, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ exists: false, stages: expect.any(Array) });
    const items = await runCli(['status', '--db', db, '--stage', 'filter', '--items', '--json']);
    expect(JSON.parse(items.stdout)).toMatchObject({ stage: 'filter', items: [] });
    expect(existsSync(db)).toBe(false);
  });

  it('works on an empty database and lists items with key, status and reason', async () => {
    const dir = tempDir();
    const path = join(dir, 'p.db');
    const db = openStore(path);
    const ledger = new Ledger(db);
    const item = (key: string) => ({ key, repo: 'o/r', at: '2025-04-03T00:00:00Z', inputHash: 'h' });
    ledger.complete('collect', 1, item('o/r#1'), { status: 'done', reason: null, detail: null, output: { n: 1 } }, null);
    ledger.complete(
      'collect',
      1,
      item('o/r#2'),
      { status: 'dropped', reason: 'not-merged', detail: 'closed without merge', output: undefined },
      null,
    );
    ledger.fail('collect', 1, item('o/r#3'), { kind: 'outside-service', reason: 'github-server-error', message: '502' }, null);
    ledger.plan('collect', 1, [item('o/r#4')], null);
    db.close();

    const items = await runCli(['status', '--db', path, '--stage', 'collect', '--items', '--json']);
    expect(items.code).toBe(0);
    const parsed = JSON.parse(items.stdout) as { items: { key: string; status: string; reason: string | null }[] };
    expect(parsed.items.map(({ key, status, reason }) => ({ key, status, reason }))).toEqual([
      { key: 'o/r#1', status: 'done', reason: null },
      { key: 'o/r#2', status: 'dropped', reason: 'not-merged' },
      { key: 'o/r#3', status: 'failed', reason: 'github-server-error' },
      { key: 'o/r#4', status: 'pending', reason: null },
    ]);
    const other = await runCli(['status', '--db', path, '--month', '2025-05', '--json']);
    const stages = JSON.parse(other.stdout).stages as { stage: string; done: number }[];
    expect(stages.find((s) => s.stage === 'collect')?.done).toBe(0);
  });

  it('builds the funnel per stage with reasons', () => {
    const rows = funnel(
      [
        { stage: 'collect', status: 'done', reason: null, count: 7 },
        { stage: 'collect', status: 'dropped', reason: 'not-merged', count: 2 },
        { stage: 'collect', status: 'failed', reason: 'github-server-error', count: 1 },
      ],
      ['collect', 'filter'],
    );
    expect(rows).toEqual([
      {
        stage: 'collect',
        done: 7,
        dropped: 2,
        failed: 1,
        pending: 0,
        waiting: 0,
        droppedBy: { 'not-merged': 2 },
        failedBy: { 'github-server-error': 1 },
      },
      // filter has planned nothing yet: the 7 collect passed on wait for it
      { stage: 'filter', done: 0, dropped: 0, failed: 0, pending: 0, waiting: 7, droppedBy: {}, failedBy: {} },
    ]);
    const text = formatFunnel(rows);
    expect(text).toMatch(/collect\s+7\s+2\s+1\s+0/);
    expect(text).toMatch(/dropped: not-merged 2/);
    expect(text).toMatch(/filter\s+0\s+0\s+0\s+0/);
    expect(text).toMatch(/waiting: 7 done by collect, not planned by filter yet/);
  });

  it('counts what waits for a stage that has planned nothing yet, and says where the last run stopped', () => {
    const counts = [
      { stage: 'classify', status: 'done', reason: null, count: 4 },
      { stage: 'classify', status: 'dropped', reason: 'not-performance', count: 1 },
    ] as const;
    const rows = funnel(counts, ['classify', 'synthesize', 'validate']);
    expect(rows.map((r) => [r.stage, r.pending, r.waiting])).toEqual([
      ['classify', 0, 0],
      ['synthesize', 0, 4],
      // validate waits for synthesize, which passed nothing on.
      ['validate', 0, 0],
    ]);
    const text = formatFunnel(rows, {
      runId: 3,
      window: '2025-04',
      stage: 'synthesize',
      reason: 'no-asv-in-image',
      issues: ['docker.baseImage: x has no asv'],
      fix: 'build it',
    });
    expect(text).toMatch(/waiting: 4 done by classify, not planned by synthesize yet \(the last run stopped here/);
    expect(text).toMatch(/the last run of 2025-04 \(#3\) stopped at synthesize \(no-asv-in-image\)/);
    expect(text).toMatch(/^ {2}fix: build it$/m);
  });
});
