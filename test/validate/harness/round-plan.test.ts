import { describe, expect, it } from 'vitest';
import { measureInterleaved } from '../../../stages/validate/harness/interleave.js';
import { expectedRoundMs, nextRound, waterLevel } from '../../../stages/validate/harness/plan.js';
import { scripted, scriptedSettings } from './scripted-workers.js';

/**
 * The round plan by cost (`validate.harness.plan: cost`, issue 37): under a budget, the cheap
 * workloads take every round and an expensive one the rounds its share allows, never fewer than
 * the first interim look; the old plan (`even`) stops every workload at once. Scripted workers
 * and clock: param's shape, one workload (a fresh interpreter per sample) costing 50 times the
 * others.
 */

describe('the water level', () => {
  it('is the cap at which the capped costs add up to the time there is', () => {
    expect(waterLevel([10, 20, 30], 60)).toBe(Infinity);
    expect(waterLevel([10, 20, 30], 45)).toBe(17.5);
    expect(waterLevel([10, 10, 100], 50)).toBe(30);
    expect(waterLevel([5, 5], 4)).toBe(2);
  });
});

describe('the next round', () => {
  const w = (name: string, spentMs: number, rounds: number, roundsLeft: number) => ({ name, spentMs, rounds, roundsLeft });

  it('measures every workload when the rest of the rounds fit in the budget', () => {
    const all = [w('a', 100, 2, 18), w('b', 5000, 2, 18)];
    expect(nextRound(all, 1e9, 6)).toEqual(new Set(['a', 'b']));
    expect(expectedRoundMs(all)).toBe(2550);
  });

  it('leaves out the expensive workload once past its share, never before the first look', () => {
    // a: 50 ms a round, b: 2,500 ms a round; 40 s left
    expect(nextRound([w('a', 300, 6, 14), w('b', 15_000, 6, 14)], 40_000, 6)).toEqual(new Set(['a', 'b']));
    // 5 s left: b's next round (2.5 s) still fits beside a's 13 (0.65 s); 1 s left: it does not
    expect(nextRound([w('a', 350, 7, 13), w('b', 17_500, 7, 13)], 5_000, 6)).toEqual(new Set(['a', 'b']));
    expect(nextRound([w('a', 350, 7, 13), w('b', 17_500, 7, 13)], 1_000, 6)).toEqual(new Set(['a']));
    expect(nextRound([w('a', 250, 5, 15), w('b', 12_500, 5, 15)], 0, 6)).toEqual(new Set(['a', 'b']));
  });

  it('measures a workload of unknown cost (no round yet)', () => {
    expect(nextRound([w('a', 0, 0, 20)], 0, 6)).toEqual(new Set(['a']));
  });
});

async function measure(plan: 'cost' | 'even', budgetMs: number) {
  // a batch of the import workload lasts 1 s, the others 20 ms
  const s = scripted({
    workloads: ['a', 'b', 'c', 'd', 'import'],
    answer: () => null,
    sampleSeconds: (_side, _clock, command) => (command.benchmark === 'bench.time_import' ? 1 : 0.02) / command.samples,
  });
  const settings = scriptedSettings(
    { rounds: 20, samples: 3, interleave: 'batch', plan, seed: 1, budgetMs, warmupSeconds: 0, looks: [6, 10, 15] },
    s.now,
  );
  const m = await measureInterleaved(s.workers, settings);
  const rounds = Object.fromEntries(
    m.workloads.map((x) => [x.ref.name.replace('bench.time_', ''), x.base.rounds.filter((r) => r !== null).length]),
  );
  return { m, rounds, leftOut: Object.fromEntries(m.workloads.map((x) => [x.ref.name.replace('bench.time_', ''), x.leftOut ?? 0])) };
}

describe('a measurement planned by cost', () => {
  it('gives the cheap workloads every round and the expensive one what the budget leaves, within the budget', async () => {
    // a round of everything: 3 s (import) + 4 x 60 ms, the warm-up pass as much; 20 rounds 68 s.
    // The budget is 30 s: the cheap ones' 20 rounds take 4.8 s, which leaves the import 7 rounds
    const cost = await measure('cost', 30_000);
    expect(cost.rounds).toEqual({ a: 20, b: 20, c: 20, d: 20, import: 7 });
    expect(cost.leftOut.import).toBe(13);
    expect(cost.m.durationMs).toBeLessThanOrEqual(30_000);
    // the old plan: everyone stops at the round the budget is reached
    const even = await measure('even', 30_000);
    expect(even.rounds).toEqual({ a: 8, b: 8, c: 8, d: 8, import: 8 });
    expect(even.m.budgetExhausted).toBe(true);
  });

  it('measures every workload every round when the budget allows it, as the old plan does', async () => {
    const cost = await measure('cost', 100_000);
    const even = await measure('even', 100_000);
    expect(cost.rounds).toEqual({ a: 20, b: 20, c: 20, d: 20, import: 20 });
    expect(cost.m.order).toEqual(even.m.order);
    expect(cost.m.budgetExhausted).toBe(false);
  });

  it('keeps the budget a limit: a budget smaller than the first look stops every workload, as the old plan does', async () => {
    // 5 s: the warm-up pass and one round (6.5 s) pass it already
    const cost = await measure('cost', 5_000);
    const even = await measure('even', 5_000);
    expect(cost.rounds).toEqual({ a: 1, b: 1, c: 1, d: 1, import: 1 });
    expect(cost.m.budgetExhausted).toBe(true);
    expect(cost.m.order).toEqual(even.m.order);
  });
});
