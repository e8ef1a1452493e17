import { describe, expect, it } from 'vitest';
import {
  measureInterleaved,
  type HarnessWorker,
  type HarnessWorkers,
  type InterleaveSettings,
} from '../../../stages/validate/harness/interleave.js';
import type { ReadyMessage } from '../../../stages/validate/harness/messages.js';

/**
 * A patch that changes no code any workload runs (rich #2943 on the real suite): the selection
 * chooses nothing, and nothing is measured: no expert or calibration worker is started and no
 * batch is run (before, the five controls were measured for every round: 37 s on rich).
 */
describe('interleaved measurement when the selection chooses no workload', () => {
  it('opens only the base worker, runs no batch and measures no round', async () => {
    const ready: ReadyMessage = {
      event: 'ready',
      protocol: 1,
      python: '3.13.5',
      benchmarks: {},
      workloads: [{ name: 'bench.time_a', benchmark: 'bench.time_a', param: 0 }],
    };
    const opened: string[] = [];
    let batches = 0;
    const worker = (): HarnessWorker => ({
      start: ready,
      batch: () => {
        batches += 1;
        return Promise.reject(new Error('no batch should run'));
      },
      restart: () => Promise.reject(new Error('no restart')),
      fingerprint: () => Promise.reject(new Error('no fingerprint')),
      outline: () => Promise.resolve(null),
      modules: () => Promise.resolve(null),
      log: () => '',
      close: () => Promise.resolve(),
    });
    const workers: HarnessWorkers = {
      open: (side) => {
        opened.push(side);
        return Promise.resolve(worker());
      },
    };
    const settings: InterleaveSettings = {
      rounds: 10,
      roundsPerProcess: 1,
      samples: 5,
      mode: 'alternate',
      calibration: true,
      seed: 1,
      budgetMs: 60_000,
      batchTimeoutSeconds: null,
      clock: 'cpu',
      warmupSeconds: 0,
      choose: () => Promise.resolve(new Set<string>()),
    };
    const m = await measureInterleaved(workers, settings);
    expect(opened).toEqual(['base']);
    expect(batches).toBe(0);
    expect(m).toMatchObject({ expert: null, calibration: null, workloads: [], rounds: 0 });
  });
});
