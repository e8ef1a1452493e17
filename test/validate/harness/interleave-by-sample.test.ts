import { describe, expect, it } from 'vitest';
import { measureInterleaved, type Side } from '../../../stages/validate/harness/interleave.js';
import { scripted, scriptedSettings as settings } from './scripted-workers.js';

/**
 * Sides that take turns sample by sample (`validate.harness.interleave: sample`, issue 37): the
 * commands each side gets, what a failure part-way through a round leaves, and why it is the
 * default: on a machine whose speed changes for a fraction of a second (this VM: 1.4-1.7x for
 * 0.1-3 s), a change that falls between two sides' whole batches is a false difference in that
 * round's pair; split into turns, it falls on every side alike. Scripted workers and clock.
 */

describe('sides taking turns sample by sample', () => {
  it('gives every side one-sample batches, the warm-up before the first turn only, and keeps the round whole', async () => {
    const s = scripted();
    const m = await measureInterleaved(s.workers, settings({}, s.now));
    // the warm-up pass is unchanged: one batch per side and workload, asv's own warm-up
    const warmUp = s.log.slice(0, 6);
    expect(warmUp.every((b) => b.command.samples === 1 && b.command.warmup === null)).toBe(true);
    const rounds = s.log.slice(6);
    // 4 rounds x 2 workloads x 3 turns x 3 sides
    expect(rounds).toHaveLength(72);
    expect(rounds.every((b) => b.command.samples === 1)).toBe(true);
    expect(m.batches).toBe(78);
    // per workload and round: each side's first turn warms up for warmupSeconds, its later ones not at all
    for (const side of ['base', 'expert', 'calibration'] as const) {
      const ofSide = rounds.filter((b) => b.side === side && b.command.benchmark === 'bench.time_a');
      expect(ofSide.map((b) => b.command.warmup)).toEqual([0.02, 0, 0, 0.02, 0, 0, 0.02, 0, 0, 0.02, 0, 0]);
    }
    for (const w of m.workloads) {
      for (const side of [w.base, w.expert, w.calibration!]) expect(side.rounds.map((r) => r?.length)).toEqual([3, 3, 3, 3]);
    }
    // each round's step per workload: its turns, each a new random order of the three sides
    expect(m.order).toHaveLength(4);
    for (const round of m.order) {
      const steps = round.split(' ');
      expect(steps).toHaveLength(2);
      for (const step of steps) expect(step).toMatch(/^[01]:[ABC]{3}\/[ABC]{3}\/[ABC]{3}$/);
    }
    expect(new Set(m.order.flatMap((r) => r.split(' ').flatMap((step) => step.slice(2).split('/')))).size).toBeGreaterThan(1);
  });

  it("drops the round of a side that fails on a later turn, and goes on without the calibration's failure", async () => {
    const s = scripted({
      // the calibration worker's batches: 2 in the warm-up pass, then 3 turns a round per workload;
      // fail its second turn of workload a's round 1 (or whichever of its batches is the 10th)
      answer: (side, index) => (side === 'calibration' && index === 9 ? { ok: false, status: 'failed', message: 'boom' } : null),
    });
    const m = await measureInterleaved(s.workers, settings({}, s.now));
    const failed = m.workloads.find((w) => w.calibration?.failure !== null)!;
    expect(failed.calibration!.failure).toMatchObject({ status: 'failed', message: 'boom' });
    const round = failed.calibration!.failure!.round!;
    expect(round).toBeGreaterThan(0);
    // the round it failed in is no evidence, the rounds before it are whole
    expect(failed.calibration!.rounds[round]).toBeNull();
    expect(failed.calibration!.rounds.slice(0, round).every((r) => r?.length === 3)).toBe(true);
    // base and expert measured every round in full
    expect(failed.base.rounds.every((r) => r?.length === 3)).toBe(true);
    expect(failed.expert.rounds.every((r) => r?.length === 3)).toBe(true);
    // after the failure the calibration side takes no more turns of that workload
    expect(
      m.order
        .at(-1)!
        .split(' ')
        .find((step) => step.startsWith(`${m.workloads.indexOf(failed)}:`)),
    ).not.toContain('C');
  });

  it('stops a workload whose base fails part-way through a round, with that round of the base dropped', async () => {
    const s = scripted({
      answer: (side, index, command) =>
        side === 'base' && command.benchmark === 'bench.time_b' && index >= 5 ? { ok: false, status: 'timeout', message: 'slow' } : null,
    });
    const m = await measureInterleaved(s.workers, settings({ calibration: false }, s.now));
    const b = m.workloads.find((w) => w.ref.name === 'bench.time_b')!;
    expect(b.base.failure).toMatchObject({ status: 'timeout' });
    expect(b.base.rounds[b.base.failure!.round!]).toBeNull();
    const a = m.workloads.find((w) => w.ref.name === 'bench.time_a')!;
    expect(a.base.rounds.every((r) => r?.length === 3)).toBe(true);
  });

  it('keeps a machine speed change that lasts a fraction of a second out of the pairs, where batches let it in', async () => {
    // identical code on every side; the machine runs 1.6x slower in every other 500 ms window (a
    // workload's round lasts about 130 ms: ten samples of 10-16 ms)
    const sampleSeconds = (_side: Side, clockMs: number) => (Math.floor(clockMs / 500) % 2 === 0 ? 0.01 : 0.016);
    const spread = async (interleave: 'batch' | 'sample') => {
      const s = scripted({ sampleSeconds });
      const m = await measureInterleaved(s.workers, settings({ interleave, rounds: 40, samples: 5, seed: 3, calibration: false }, s.now));
      const median = (xs: readonly number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
      const logs = m.workloads.flatMap((w) => w.base.rounds.map((b, r) => Math.log(median(w.expert.rounds[r]!) / median(b!))));
      return { falseDifferences: logs.filter((l) => Math.abs(l) > 0.1).length, pairs: logs.length };
    };
    const batch = await spread('batch');
    const sample = await spread('sample');
    expect(batch.pairs).toBe(80);
    expect(sample.pairs).toBe(80);
    // batch by batch, a change between the two sides' batches makes a pair 1.6x off; turn by
    // turn the median of five samples each sees the same windows
    expect(batch.falseDifferences).toBe(20);
    expect(sample.falseDifferences).toBe(4);
  });

  it('keeps batch turns for a single-value benchmark (track, mem, peakmem): one value a batch', async () => {
    const s = scripted({
      workloads: ['a', 'track'],
      answer: (_side, _index, command) => (command.benchmark === 'bench.time_track' ? { ok: true, samples: [42], number: null } : null),
    });
    const m = await measureInterleaved(s.workers, settings({}, s.now));
    const track = s.log.filter((b) => b.command.benchmark === 'bench.time_track').slice(3);
    expect(track).toHaveLength(12); // 4 rounds x 3 sides, one batch each
    expect(track.every((b) => b.command.samples === 3)).toBe(true);
    for (const round of m.order) {
      expect(round.split(' ').find((step) => step.startsWith('1:'))).toMatch(/^1:[ABC]{3}$/);
      expect(round.split(' ').find((step) => step.startsWith('0:'))).toMatch(/^0:([ABC]{3}\/){2}[ABC]{3}$/);
    }
  });
});
