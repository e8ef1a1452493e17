import { describe, expect, it } from 'vitest';
import { measureInterleaved, type Side } from '../../../stages/validate/harness/interleave.js';
import { scripted, scriptedSettings } from './scripted-workers.js';

/**
 * The fresh worker processes between rounds name the benchmarks each side still measures, so
 * that the harness imports only their modules (test/validate/harness/serve-restart-modules.test.ts
 * shows the harness's side): a workload settled at a look, or failed on a side, is left out.
 */

const named = (restarts: readonly { side: Side; benchmarks: readonly string[] | null }[], side: Side) =>
  restarts.filter((r) => r.side === side).map((r) => (r.benchmarks ?? ['(all)']).join(','));

describe('restarts that name what is still measured', () => {
  it('name every workload still measured, and drop one once it is settled at a look', async () => {
    const s = scripted({ workloads: ['a', 'b', 'c'] });
    const m = await measureInterleaved(
      s.workers,
      scriptedSettings({ rounds: 6, looks: [3], minRounds: 3, settle: () => new Map([['bench.time_a', 'unchanged' as const]]) }, s.now),
    );
    expect(m.rounds).toBe(6);
    const all = 'bench.time_a,bench.time_b,bench.time_c';
    // restarts before rounds 2 and 3 name all three; after the look at round 3, a is settled
    for (const side of ['base', 'expert', 'calibration'] as const)
      expect(named(s.restarts, side)).toEqual([
        all,
        all,
        'bench.time_b,bench.time_c',
        'bench.time_b,bench.time_c',
        'bench.time_b,bench.time_c',
      ]);
  });

  it('leave out, on a side, a workload that failed there', async () => {
    const s = scripted({
      workloads: ['a', 'b'],
      answer: (side, index, command) =>
        side === 'calibration' && command.benchmark === 'bench.time_b' && index > 3
          ? { ok: false, status: 'failed', message: 'boom' }
          : null,
    });
    await measureInterleaved(s.workers, scriptedSettings({ rounds: 4 }, s.now));
    const last = (side: Side) => named(s.restarts, side).at(-1);
    expect(last('base')).toBe('bench.time_a,bench.time_b');
    expect(last('expert')).toBe('bench.time_a,bench.time_b');
    expect(last('calibration')).toBe('bench.time_a');
  });
});
