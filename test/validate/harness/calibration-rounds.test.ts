import { describe, expect, it } from 'vitest';
import { measureInterleaved } from '../../../stages/validate/harness/interleave.js';
import { scripted, scriptedSettings } from './scripted-workers.js';

/**
 * The calibration worker's rounds (`validate.harness.calibrationRounds`, issue 37): it takes part
 * in the first N rounds, then it is closed and the rounds go on with base and expert only. The
 * verdict's use of what it measured is in test/validate/paired (a calibration table with fewer
 * pairs than the base/expert one).
 */

describe('a calibration bounded to its first rounds', () => {
  it('measures the calibration side in the first rounds only and closes its worker after them', async () => {
    const s = scripted();
    const m = await measureInterleaved(s.workers, scriptedSettings({ rounds: 8, calibrationRounds: 3 }, s.now));
    for (const w of m.workloads) {
      expect(w.calibration!.rounds.map((r) => r !== null)).toEqual([true, true, true, false, false, false, false, false]);
      expect(w.base.rounds.every((r) => r?.length === 3)).toBe(true);
      expect(w.expert.rounds.every((r) => r?.length === 3)).toBe(true);
      expect(w.calibration!.failure).toBeNull();
    }
    // rounds 4 to 8 are turns of A and B only
    for (const round of m.order.slice(3)) expect(round).not.toContain('C');
    for (const round of m.order.slice(0, 3)) expect(round.match(/C/g)).toHaveLength(6);
    // closed once, before round 4; its stderr's tail is still reported
    expect(s.closed.filter((side) => side === 'calibration')).toHaveLength(1);
    expect(m.logs.calibration).toBe("calibration's stderr");
    // batches: warm-up 2 x 3, rounds 1-3: 2 x 3 sides x 3 turns, rounds 4-8: 2 x 2 x 3
    expect(m.batches).toBe(6 + 54 + 60);
  });

  it('is every round when unbounded, as before', async () => {
    const s = scripted();
    const m = await measureInterleaved(s.workers, scriptedSettings({ rounds: 5 }, s.now));
    for (const w of m.workloads) expect(w.calibration!.rounds.every((r) => r?.length === 3)).toBe(true);
    expect(s.closed.filter((side) => side === 'calibration')).toHaveLength(1); // at the end
  });
});
