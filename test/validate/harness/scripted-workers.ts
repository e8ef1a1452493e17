import type { HarnessWorker, HarnessWorkers, InterleaveSettings, Side } from '../../../stages/validate/harness/interleave.js';
import type { BatchCommand, BatchResult, ReadyMessage } from '../../../stages/validate/harness/messages.js';

/** Scripted harness workers on a scripted clock, for the interleaved driver's tests. */

export type Command = Omit<BatchCommand, 'id' | 'op'>;

export interface Script {
  /** The suite's workloads (names `bench.time_X`); default a and b. */
  readonly workloads?: readonly string[];
  /** The answer to a side's batch (its index among that side's batches, the command); null: samples as scripted. */
  readonly answer?: (side: Side, index: number, command: Command) => BatchResult | null;
  /** Seconds a sample lasts at the scripted clock's time (ms); default 10 ms. */
  readonly sampleSeconds?: (side: Side, clockMs: number, command: Command) => number;
}

export function readyOf(names: readonly string[]): ReadyMessage {
  return {
    event: 'ready',
    protocol: 1,
    python: '3.13.5',
    benchmarks: {},
    workloads: names.map((n) => ({ name: `bench.time_${n}`, benchmark: `bench.time_${n}`, param: 0 })),
  };
}

export function scripted(script: Script = {}) {
  let clock = 0;
  const log: { side: Side; command: Command }[] = [];
  const counts: Partial<Record<Side, number>> = {};
  const opened: Side[] = [];
  const closed: Side[] = [];
  /** Each restart: the side and the benchmarks it named (null: none, the whole suite). */
  const restarts: { side: Side; benchmarks: readonly string[] | null }[] = [];
  const ready = readyOf(script.workloads ?? ['a', 'b']);
  const worker = (side: Side): HarnessWorker => ({
    start: ready,
    batch: (command) => {
      const index = (counts[side] = (counts[side] ?? 0) + 1) - 1;
      log.push({ side, command });
      const given = script.answer?.(side, index, command);
      if (given) return Promise.resolve(given);
      const samples: number[] = [];
      for (let k = 0; k < command.samples; k++) {
        const s = script.sampleSeconds?.(side, clock, command) ?? 0.01;
        samples.push(s);
        clock += s * 1000;
      }
      clock += 1; // the message's round trip
      return Promise.resolve({ ok: true, samples, number: 1 });
    },
    restart: (_signal, benchmarks) => {
      restarts.push({ side, benchmarks: benchmarks ?? null });
      return Promise.resolve({ ok: true });
    },
    fingerprint: () => Promise.reject(new Error('nothing is fingerprinted here')),
    outline: () => Promise.resolve(null),
    modules: () => Promise.resolve(null),
    log: () => `${side}'s stderr`,
    close: () => {
      closed.push(side);
      return Promise.resolve();
    },
  });
  const workers: HarnessWorkers = {
    open: (side) => {
      opened.push(side);
      return Promise.resolve(worker(side));
    },
  };
  return { workers, log, opened, closed, restarts, now: () => clock };
}

/** Settings of a scripted measurement: 4 rounds of 3 samples, three sides taking turns sample by sample. */
export function scriptedSettings(over: Partial<InterleaveSettings>, now: () => number): InterleaveSettings {
  return {
    rounds: 4,
    roundsPerProcess: 1,
    samples: 3,
    mode: 'alternate',
    interleave: 'sample',
    calibration: true,
    seed: 7,
    budgetMs: 1e12,
    batchTimeoutSeconds: null,
    clock: 'cpu',
    warmupSeconds: 0.02,
    now,
    monotonic: now,
    ...over,
  };
}
