import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../cache/store.js';
import { runStage } from '../../pipeline/runner.js';
import { filterStage } from '../../stages/filter/index.js';
import { filterOutputSchema } from '../../pipeline/concepts/records/filter-output.js';
import { monthScope, testConfig, testContext } from '../helpers/context.js';
import { file, makePullRequest, storeCollected } from '../helpers/pull-request.js';

describe('filter stage', () => {
  let db: Db;
  beforeEach(() => {
    db = openStore(':memory:');
  });
  afterEach(() => db.close());

  it('plans collect done items of the window, records verdicts with reasons, and reuses them next time', async () => {
    storeCollected(db, makePullRequest({ number: 1 }));
    storeCollected(db, makePullRequest({ number: 2, title: 'DOC: fix typo', body: '' }));
    storeCollected(db, makePullRequest({ number: 3, asvConfig: null }));
    storeCollected(db, makePullRequest({ number: 4, files: [file('docs/speed.md')] }));
    storeCollected(db, makePullRequest({ number: 5, mergedAt: '2025-05-02T00:00:00Z' })); // outside the window

    const ctx = testContext(db);
    const report = await runStage(ctx, filterStage, monthScope('2025-04'));
    expect(report).toMatchObject({
      planned: 4,
      ran: 4,
      done: 1,
      dropped: { 'negative-message': 1, 'no-asv-config': 1, 'no-core-files': 1 },
    });

    const row = ctx.ledger.get('filter', 'acme/fastlib#1')!;
    expect(row.status).toBe('done');
    const out = filterOutputSchema.parse(row.output);
    expect(out.positiveCues.map((c) => c.cue)).toContain('speed');
    expect(out.diffBytes).toBeGreaterThan(0);
    expect(ctx.ledger.get('filter', 'acme/fastlib#2')).toMatchObject({ status: 'dropped', reason: 'negative-message' });
    expect(ctx.ledger.get('filter', 'acme/fastlib#5')).toBeUndefined();

    const again = await runStage(ctx, filterStage, monthScope('2025-04'));
    expect(again).toMatchObject({ planned: 4, reused: 4, ran: 0, done: 1 });
  });

  it('runs an item again when the filter configuration changes', async () => {
    storeCollected(db, makePullRequest({ number: 7 }));
    await runStage(testContext(db), filterStage, monthScope());
    const strict = testContext(db, { config: testConfig({ filter: { maxDiffTokens: 5 } }) });
    const report = await runStage(strict, filterStage, monthScope());
    expect(report).toMatchObject({ reused: 0, ran: 1, dropped: { 'diff-too-large': 1 } });
  });

  it('records a failure (not a crash) when the collected record is missing', async () => {
    storeCollected(db, makePullRequest({ number: 8 }));
    db.prepare('DELETE FROM pull_requests').run();
    const report = await runStage(testContext(db), filterStage, monthScope());
    expect(report.failed).toEqual({ 'pull-request-missing': 1 });
  });
});
