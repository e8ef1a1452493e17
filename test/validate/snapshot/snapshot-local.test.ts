import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSnapshotComparison, parseSnapshotRecord, summarizeSnapshot } from '../../../stages/validate/correctness/snapshot.js';
import { SNAPSHOT_SCRIPT } from '../../../pipeline/services/environments/harness-files.js';
import { writeToyProject } from './suite.js';

const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'perfmine-snapshot-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function snapshot(repo: string, mode: 'record' | 'compare', out: string, extra: string[] = []) {
  await run('python3', [SNAPSHOT_SCRIPT, mode, '--repo', repo, '--config', 'asv.conf.json', '--out', out, ...extra], { cwd: scratch });
  return readFileSync(out, 'utf8');
}

describe('the snapshot helper with the local python3 on a generated project', () => {
  const base = join(scratch, 'base');
  const expert = join(scratch, 'expert');
  writeToyProject(base);
  writeToyProject(expert, { expert: true });

  it('records every benchmark as asv names it, with values, hashes and the reasons some have no equality', async () => {
    const record = parseSnapshotRecord(await snapshot(base, 'record', join(scratch, 'base.json')));
    const byName = new Map(record.workloads.map((w) => [w.name, w]));
    expect([...byName.keys()]).toEqual([
      'funcs.time_clock',
      'funcs.time_fragile',
      'funcs.time_identity',
      'funcs.time_nan',
      'funcs.time_raises_on_base',
      'funcs.time_seeded_random',
      'funcs.time_total',
      'funcs.track_mean',
      'sub.classes.Cached.track_cached',
      'sub.classes.Skipping.time_n(1)',
      'sub.classes.Skipping.time_n(2)',
      "sub.classes.Suite.time_len(1, 'a')",
      "sub.classes.Suite.time_len(3, 'a')",
    ]);
    expect(record.importErrors).toEqual([]);
    expect(byName.get('funcs.time_total')).toMatchObject({ status: 'ok', repr: '4950', skip: null });
    expect(byName.get('funcs.time_total')!.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(byName.get('funcs.time_nan')).toMatchObject({ status: 'ok', skip: 'nan' });
    expect(byName.get('funcs.time_identity')).toMatchObject({ status: 'ok', skip: 'identity-equality' });
    expect(byName.get('funcs.time_clock')).toMatchObject({ status: 'ok', skip: 'nondeterministic' });
    expect(byName.get('funcs.time_seeded_random')).toMatchObject({ status: 'ok', skip: null });
    expect(byName.get('funcs.time_raises_on_base')).toMatchObject({ status: 'error', error: 'RuntimeError: always' });
    expect(byName.get('sub.classes.Cached.track_cached')).toMatchObject({ status: 'ok', repr: '42' });
    expect(byName.get('sub.classes.Skipping.time_n(2)')).toMatchObject({ status: 'skipped' });
    expect(byName.get("sub.classes.Suite.time_len(3, 'a')")!.repr).toBe("{'n': 3, 's': 'a', 'items': (0, 1, 2)}");
  });

  it('gives the same hashes when recorded again (dict and hash-seed independent)', async () => {
    const a = parseSnapshotRecord(await snapshot(base, 'record', join(scratch, 'a.json')));
    const b = parseSnapshotRecord(await snapshot(base, 'record', join(scratch, 'b.json')));
    const stable = (r: typeof a) => r.workloads.filter((w) => w.skip !== 'nondeterministic').map((w) => [w.name, w.hash]);
    expect(stable(a)).toEqual(stable(b));
    expect(stable(a).filter(([, h]) => h !== null).length).toBeGreaterThanOrEqual(8);
  });

  it('compares the expert against the base: a changed value and a newly raising benchmark are mismatches, a 1e-13 float change is not', async () => {
    await snapshot(base, 'record', join(scratch, 'baseline.json'));
    const comparison = parseSnapshotComparison(
      await snapshot(expert, 'compare', join(scratch, 'cmp.json'), ['--baseline', join(scratch, 'baseline.json')]),
    );
    const outcome = new Map(comparison.results.map((r) => [r.name, r]));
    expect(outcome.get('funcs.time_total')).toMatchObject({ outcome: 'mismatch', reason: 'base 4950, expert 4951' });
    expect(outcome.get('funcs.time_fragile')).toMatchObject({ outcome: 'mismatch' });
    expect(outcome.get('funcs.time_fragile')!.reason).toContain('ValueError: broken by the patch');
    expect(outcome.get('funcs.track_mean')).toMatchObject({ outcome: 'equal' });
    for (const skipped of [
      'funcs.time_nan',
      'funcs.time_identity',
      'funcs.time_clock',
      'funcs.time_raises_on_base',
      'sub.classes.Skipping.time_n(2)',
    ]) {
      expect(outcome.get(skipped)!.outcome, skipped).toBe('skipped');
    }
    expect(comparison.counts).toEqual({ equal: 6, mismatch: 2, skipped: 5 });
    const summary = summarizeSnapshot(parseSnapshotRecord(readFileSync(join(scratch, 'baseline.json'), 'utf8')), comparison);
    expect(summary.mismatches.map((m) => m.name)).toEqual(['funcs.time_fragile', 'funcs.time_total']);
  });

  it('finds everything equal when the expert is the base', async () => {
    const comparison = parseSnapshotComparison(
      await snapshot(base, 'compare', join(scratch, 'same.json'), ['--baseline', join(scratch, 'baseline.json')]),
    );
    expect(comparison.counts.mismatch).toBe(0);
  });

  it('reports a benchmark module that cannot be imported', async () => {
    const broken = join(scratch, 'broken');
    writeToyProject(broken, { brokenImport: true });
    const record = parseSnapshotRecord(await snapshot(broken, 'record', join(scratch, 'broken.json')));
    expect(record.importErrors).toEqual([
      { module: 'bench.needs_network', error: 'ImportError: this suite downloads data at import time' },
    ]);
  });

  it('selects benchmarks by regular expression, as asv run --bench', async () => {
    const record = parseSnapshotRecord(await snapshot(base, 'record', join(scratch, 'sel.json'), ['--bench', 'Suite\\.time_len']));
    expect(record.workloads.map((w) => w.name)).toEqual(["sub.classes.Suite.time_len(1, 'a')", "sub.classes.Suite.time_len(3, 'a')"]);
  });
});
