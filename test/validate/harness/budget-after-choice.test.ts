import { describe, expect, it } from 'vitest';
import {
  measureInterleaved,
  type HarnessWorker,
  type HarnessWorkers,
  type InterleaveSettings,
} from '../../../stages/validate/harness/interleave.js';
import type { ReadyMessage } from '../../../stages/validate/harness/messages.js';

/**
 * The time budget counts from the choice of workloads, not from the base worker's start: on a
 * large suite the fingerprint pass that comes before it can take longer than the budget (xarray
 * #10370: 1,020 s of a 1,200 s budget, and one round was measured). A scripted clock: every
 * batch takes 1 s, the choice 5,000 s, the budget is 100 s.
 */
const ready: ReadyMessage = {
  event: 'ready',
  protocol: 1,
  python: '3.13.5',
  benchmarks: {},
  workloads: [
    { name: 'bench.time_a', benchmark: 'bench.time_a', param: 0 },
    { name: 'bench.time_b', benchmark: 'bench.time_b', param: 0 },
  ],
};

function measure(chooseMs: number, budgetMs: number) {
  let clock = 0;
  const worker = (): HarnessWorker => ({
    start: ready,
    batch: () => {
      clock += 1000;
      return Promise.resolve({ ok: true, samples: [0.01, 0.01, 0.01], number: 1 });
    },
    restart: () => Promise.resolve({ ok: true }),
    fingerprint: () => Promise.reject(new Error('the scripted choice fingerprints nothing')),
    outline: () => Promise.resolve(null),
    modules: () => Promise.resolve(null),
    log: () => '',
    close: () => Promise.resolve(),
  });
  const workers: HarnessWorkers = { open: () => Promise.resolve(worker()) };
  const settings: InterleaveSettings = {
    rounds: 10,
    roundsPerProcess: 10,
    samples: 3,
    mode: 'alternate',
    calibration: false,
    seed: 1,
    budgetMs,
    batchTimeoutSeconds: null,
    clock: 'cpu',
    warmupSeconds: 0,
    now: () => clock,
    choose: () => {
      clock += chooseMs;
      return Promise.resolve(new Set(['bench.time_a']));
    },
  };
  return measureInterleaved(workers, settings);
}

describe('the time budget of an interleaved measurement', () => {
  it('leaves out the fingerprint pass: a choice that took 50 times the budget still leaves every round', async () => {
    const m = await measure(5_000_000, 100_000);
    // one workload, two sides: 2 s a round, 2 s of warm-up; 10 rounds fit in 100 s
    expect(m).toMatchObject({ rounds: 10, budgetExhausted: false });
    expect(m.durationMs).toBe(5_000_000 + 22_000);
  });

  it('still stops at the budget once measuring: 9 s allow the warm-up and three rounds', async () => {
    const m = await measure(5_000_000, 9_000);
    expect(m).toMatchObject({ rounds: 3, budgetExhausted: true });
  });
});
