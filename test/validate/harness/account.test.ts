import { describe, expect, it } from 'vitest';
import {
  accountTotals,
  emptySideAccount,
  formatAccount,
  measurementAccountSchema,
  parseAccount,
  sumTotals,
  type MeasurementAccount,
} from '../../../pipeline/concepts/measurement-account.js';
import { accountSumMs, batchShare, measurementAccount } from '../../../stages/validate/harness/account.js';
import {
  measureInterleaved,
  type HarnessWorker,
  type HarnessWorkers,
  type InterleaveSettings,
  type Side,
} from '../../../stages/validate/harness/interleave.js';
import {
  readBatchAnswer,
  readRestartAnswer,
  readStart,
  type BatchResult,
  type ReadyMessage,
} from '../../../stages/validate/harness/messages.js';

/**
 * The account of a measurement (issue 37): a batch's share (the harness's parts, the rest of the
 * driver's wall time as overhead), the measurement's sum, the driver's account of a scripted
 * measurement whose every duration is known, the wire format old and new, and the text
 * `perfmine status --stage validate --items` prints.
 */

describe("a batch's share of its side's account", () => {
  it("splits the driver's wall time into the harness's setup, warm-up and samples, and the rest as overhead", () => {
    expect(batchShare({ setup: 0.2, warmup: 0.1, samples: 0.5 }, 1000, { warmUpPass: false, failed: false })).toEqual({
      setupMs: 200,
      warmupMs: 100,
      samplesMs: 500,
      overheadMs: expect.closeTo(200, 9) as number,
      batches: 1,
      failedMs: 0,
    });
  });

  it("counts the warm-up pass's one sample as warm-up: it is not evidence", () => {
    const s = batchShare({ setup: 0.01, warmup: 0.3, samples: 0.05 }, 400, { warmUpPass: true, failed: false });
    expect(s).toMatchObject({ setupMs: 10, samplesMs: 0, batches: 1 });
    expect(s.warmupMs).toBeCloseTo(350, 9);
    expect(s.overheadMs).toBeCloseTo(40, 9);
  });

  it('makes a batch without an account (a timeout, a crash, an older harness) overhead whole, and failed', () => {
    expect(batchShare(undefined, 60_000, { warmUpPass: false, failed: true })).toEqual({
      ...emptySideAccount(),
      overheadMs: 60_000,
      batches: 1,
      failedMs: 60_000,
    });
    // a skip the worker answered: its setup is still setup
    expect(batchShare({ setup: 0.03, warmup: 0, samples: 0 }, 35, { warmUpPass: false, failed: true })).toMatchObject({
      setupMs: 30,
      failedMs: 35,
    });
  });

  it("scales the harness's parts down to the wall time should they exceed it (clocks of different resolution)", () => {
    const s = batchShare({ setup: 0.001, warmup: 0.001, samples: 0.002 }, 3, { warmUpPass: false, failed: false });
    expect(s.overheadMs).toBe(0);
    expect(s.setupMs + s.warmupMs + s.samplesMs).toBeCloseTo(3, 9);
    expect(s.samplesMs).toBeCloseTo(1.5, 9);
  });
});

describe("the measurement's account", () => {
  const side = (setupMs: number, warmupMs: number, samplesMs: number, overheadMs: number, batches = 2) => ({
    setupMs,
    warmupMs,
    samplesMs,
    overheadMs,
    batches,
    failedMs: 0,
  });

  it('sums the sides over the workloads, keeps the heaviest, and makes the driver the rest of the wall time', () => {
    const a = measurementAccount(
      [
        { name: 'a', sides: { base: side(10, 5, 100, 5), expert: side(10, 5, 50, 5), calibration: side(10, 5, 100, 5) } },
        { name: 'b', sides: { base: side(1000, 5, 10, 5), expert: side(1000, 5, 10, 5), calibration: null } },
        { name: 'c', sides: { base: undefined, expert: undefined, calibration: undefined } },
      ],
      { wallMs: 3000, workersMs: 400, workerStarts: 3, importMs: 120, selectionMs: 200, sideBySideMs: 0 },
    );
    expect(a.sides.base).toEqual(side(1010, 10, 110, 10, 4));
    expect(a.sides.calibration).toEqual(side(10, 5, 100, 5));
    // batches 310 + 2,040 + workers 400 + selection 200 = 2,950: the driver 50
    expect(a.driverMs).toBeCloseTo(50, 9);
    expect(accountSumMs(a)).toBeCloseTo(3000, 9);
    expect(a.heaviest.map((w) => w.workload)).toEqual(['b', 'a']);
    expect(a.heaviest[0]).toEqual({ workload: 'b', setupMs: 2000, warmupMs: 10, samplesMs: 20, overheadMs: 10 });
    expect(measurementAccountSchema.parse(JSON.parse(JSON.stringify(a)))).toEqual(a);
    const t = accountTotals(a);
    expect(t).toMatchObject({ wallMs: 3000, setupMs: 2030, warmupMs: 25, samplesMs: 270, selectionMs: 200, workersMs: 400 });
    expect(t.setupMs + t.warmupMs + t.samplesMs + t.selectionMs + t.overheadMs).toBeCloseTo(3000, 9);
  });

  it('counts the time two sides ran at once (duet) in both, and takes it off once', () => {
    const a = measurementAccount([{ name: 'a', sides: { base: side(0, 0, 100, 0), expert: side(0, 0, 100, 0), calibration: null } }], {
      wallMs: 120,
      workersMs: 10,
      workerStarts: 2,
      importMs: 0,
      selectionMs: 0,
      sideBySideMs: 95,
    });
    expect(a.driverMs).toBeCloseTo(5, 9);
    expect(accountSumMs(a)).toBeCloseTo(120, 9);
    const t = accountTotals(a);
    expect(t.setupMs + t.warmupMs + t.samplesMs + t.overheadMs - t.sideBySideMs).toBeCloseTo(120, 9);
  });

  it('never makes the driver negative', () => {
    const a = measurementAccount([{ name: 'a', sides: { base: side(0, 0, 100, 0), expert: null, calibration: null } }], {
      wallMs: 99.5,
      workersMs: 0,
      workerStarts: 1,
      importMs: 0,
      selectionMs: 0,
      sideBySideMs: 0,
    });
    expect(a.driverMs).toBe(0);
  });

  it('reads a stored account, and nothing from what is not one', () => {
    const a = measurementAccount([], { wallMs: 5, workersMs: 5, workerStarts: 1, importMs: 1, selectionMs: 0, sideBySideMs: 0 });
    expect(parseAccount(JSON.stringify(a))).toEqual(a);
    expect(parseAccount(null)).toBeNull();
    expect(parseAccount('{"wallMs": 3}')).toBeNull();
    expect(parseAccount('not json')).toBeNull();
  });

  it('adds totals over candidates', () => {
    const one = accountTotals(
      measurementAccount([{ name: 'a', sides: { base: side(1, 2, 3, 4), expert: null, calibration: null } }], {
        wallMs: 20,
        workersMs: 5,
        workerStarts: 1,
        importMs: 0,
        selectionMs: 3,
        sideBySideMs: 0,
      }),
    );
    expect(sumTotals([one, one])).toEqual(Object.fromEntries(Object.entries(one).map(([k, v]) => [k, 2 * v])));
  });
});

describe('the account as perfmine status prints it', () => {
  it('gives the wall time and its parts with their shares, each side, and the heaviest workloads', () => {
    const account: MeasurementAccount = {
      wallMs: 200_000,
      sides: {
        base: { setupMs: 30_000, warmupMs: 4_000, samplesMs: 40_000, overheadMs: 6_000, batches: 42, failedMs: 0 },
        expert: { setupMs: 30_000, warmupMs: 4_000, samplesMs: 20_000, overheadMs: 6_000, batches: 42, failedMs: 1_500 },
        calibration: { setupMs: 0, warmupMs: 0, samplesMs: 0, overheadMs: 0, batches: 0, failedMs: 0 },
      },
      workers: { ms: 30_000, starts: 40, importMs: 12_000 },
      selectionMs: 8_000,
      sideBySideMs: 0,
      driverMs: 22_000,
      heaviest: [{ workload: 'bench.Slow.time_x', setupMs: 58_000, warmupMs: 1_000, samplesMs: 10_000, overheadMs: 1_000 }],
    };
    expect(formatAccount(account)).toEqual([
      'measured 200.0 s: setup 60.0 s (30%), warm-up 8.0 s (4%), samples 60.0 s (30%), selection 8.0 s (4%), overhead 64.0 s (32%); overhead: batches 12.0 s, 40 worker processes 30.0 s (suite imports 12.0 s), driver 22.0 s',
      'base 42 batches: setup 30.0 s, warm-up 4.0 s, samples 40.0 s, overhead 6.0 s; expert 42 batches: setup 30.0 s, warm-up 4.0 s, samples 20.0 s, overhead 6.0 s (failed batches 1.5 s)',
      'heaviest: bench.Slow.time_x 70.0 s (setup 58.0 s, samples 10.0 s)',
    ]);
    expect(formatAccount({ ...account, wallMs: 700_000 })[0]).toMatch(/^measured 11 min 40 s: /);
  });
});

describe("the harness's messages with and without an account", () => {
  it('reads a batch answer of an older harness (no account) as before', () => {
    expect(readBatchAnswer('{"id":3,"ok":true,"kind":"time","samples":[0.5,0.6],"number":2,"elapsed":1.5}')).toEqual({
      id: 3,
      ok: true,
      samples: [0.5, 0.6],
      number: 2,
    });
    expect(readBatchAnswer('{"id":4,"ok":false,"status":"timeout","message":"killed after 1 s"}')).toEqual({
      id: 4,
      ok: false,
      status: 'timeout',
      message: 'killed after 1 s',
    });
    expect(readRestartAnswer('{"id":5,"ok":true,"worker_pid":9,"elapsed":0.2}')).toEqual({ id: 5, ok: true });
    expect(readStart('{"event":"ready","protocol":1,"python":"3.8.10","benchmarks":{},"workloads":[]}')).toMatchObject({ event: 'ready' });
  });

  it("reads the account of every kind of answer the worker gives, and the suite's import time", () => {
    const account = { setup: 0.25, warmup: 0.125, samples: 1.5 };
    const text = JSON.stringify(account);
    expect(readBatchAnswer(`{"id":1,"ok":true,"kind":"time","samples":[0.1],"number":3,"account":${text},"elapsed":2}`)).toEqual({
      id: 1,
      ok: true,
      samples: [0.1],
      number: 3,
      account,
    });
    expect(readBatchAnswer(`{"id":2,"ok":true,"kind":"track","value":7,"account":${text}}`)).toMatchObject({ samples: [7], account });
    expect(readBatchAnswer(`{"id":3,"ok":false,"status":"skipped","message":"NotImplementedError in setup","account":${text}}`)).toEqual({
      id: 3,
      ok: false,
      status: 'skipped',
      message: 'NotImplementedError in setup',
      account,
    });
    expect(readRestartAnswer('{"id":5,"ok":true,"worker_pid":9,"elapsed":0.2,"import_seconds":0.05}')).toEqual({
      id: 5,
      ok: true,
      importSeconds: 0.05,
    });
    expect(readRestartAnswer('{"id":5,"ok":true,"worker_pid":9,"elapsed":0.2,"import_seconds":null}')).toEqual({ id: 5, ok: true });
    expect(readStart('{"event":"ready","protocol":1,"python":"3.13.5","import_seconds":0.7,"benchmarks":{},"workloads":[]}')).toMatchObject(
      {
        import_seconds: 0.7,
      },
    );
  });

  it('refuses an account that is not one (a negative or missing part)', () => {
    expect(
      readBatchAnswer('{"id":1,"ok":true,"kind":"time","samples":[0.1],"number":3,"account":{"setup":-1,"warmup":0,"samples":0}}'),
    ).toMatchObject({
      ok: false,
      status: 'unknown',
    });
    expect(readBatchAnswer('{"id":1,"ok":true,"kind":"time","samples":[0.1],"number":3,"account":{"setup":1}}')).toMatchObject({
      ok: false,
      status: 'unknown',
    });
  });
});

describe("the driver's account of a scripted measurement", () => {
  const ready: ReadyMessage = {
    event: 'ready',
    protocol: 1,
    python: '3.13.5',
    import_seconds: 0.5,
    benchmarks: {},
    workloads: [
      { name: 'bench.time_a', benchmark: 'bench.time_a', param: 0 },
      { name: 'bench.time_slow_setup', benchmark: 'bench.time_slow_setup', param: 0 },
    ],
  };

  /**
   * A clock the workers move: opening a worker 1,000 ms, a restart 300 ms, the choice 2,000 ms, a
   * batch 160 ms (210 with the slow setup) of which the harness accounts setup (10, or 60 for the
   * slow setup), warm-up 5 and samples 50; every reading of the clock 1 ms more.
   */
  async function measure(mode: 'alternate' | 'duet', account = true) {
    let clock = 0;
    const monotonic = () => (clock += 1);
    const worker = (): HarnessWorker => ({
      start: ready,
      batch: (command) => {
        const setup = command.benchmark === 'bench.time_slow_setup' ? 0.06 : 0.01;
        clock += 150 + setup * 1000;
        const result: BatchResult = { ok: true, samples: [0.01, 0.01, 0.01], number: 1 };
        return Promise.resolve(account ? { ...result, account: { setup, warmup: 0.005, samples: 0.05 } } : result);
      },
      restart: () => {
        clock += 300;
        return Promise.resolve({ ok: true, importSeconds: 0.25 });
      },
      fingerprint: () => Promise.reject(new Error('not asked')),
      outline: () => Promise.resolve(null),
      modules: () => Promise.resolve(null),
      log: () => '',
      close: () => Promise.resolve(),
    });
    const workers: HarnessWorkers = {
      open: () => {
        clock += 1000;
        return Promise.resolve(worker());
      },
    };
    const settings: InterleaveSettings = {
      rounds: 4,
      roundsPerProcess: 2,
      samples: 3,
      mode,
      calibration: true,
      seed: 7,
      budgetMs: 1e9,
      batchTimeoutSeconds: null,
      clock: 'cpu',
      warmupSeconds: 0,
      monotonic,
      choose: () => {
        clock += 2000;
        return Promise.resolve(null);
      },
    };
    return measureInterleaved(workers, settings);
  }

  it('accounts every batch of every side, the workers, the selection and the driver, summing to the wall time (alternate)', async () => {
    const m = await measure('alternate');
    const a = m.account!;
    // 2 workloads x 3 sides x (1 warm-up batch + 4 rounds)
    const sides: Side[] = ['base', 'expert', 'calibration'];
    for (const s of sides) expect(a.sides[s].batches).toBe(10);
    expect(m.batches).toBe(30);
    expect(a.workers).toEqual({ ms: expect.any(Number) as number, starts: 6, importMs: 3 * 500 + 3 * 250 });
    expect(a.sideBySideMs).toBe(0);
    expect(a.selectionMs).toBeGreaterThanOrEqual(2000);
    expect(a.selectionMs).toBeLessThan(2010);
    expect(accountSumMs(a)).toBeCloseTo(a.wallMs, 6);
    for (const s of sides) {
      const x = a.sides[s];
      // the rounds' samples: 4 rounds x 2 workloads x 50 ms; the warm-up pass's sample is warm-up
      expect(x.samplesMs).toBeCloseTo(400, 6);
      expect(x.warmupMs).toBeCloseTo(10 * 5 + 2 * 50, 6);
      expect(x.setupMs).toBeCloseTo(5 * 10 + 5 * 60, 6);
      expect(x.setupMs + x.warmupMs + x.samplesMs + x.overheadMs).toBeGreaterThanOrEqual(5 * 160 + 5 * 210);
    }
    // per workload and side: the slow setup's workload shows it
    const slow = m.workloads.find((w) => w.ref.name === 'bench.time_slow_setup')!;
    const fast = m.workloads.find((w) => w.ref.name === 'bench.time_a')!;
    expect(slow.base.account!.setupMs).toBeGreaterThan(fast.base.account!.setupMs * 5);
    expect(a.heaviest[0]!.workload).toBe('bench.time_slow_setup');
  });

  it('takes off the time two sides ran at once (duet), and still sums to the wall time', async () => {
    const m = await measure('duet');
    const a = m.account!;
    expect(a.sideBySideMs).toBeGreaterThan(0);
    expect(accountSumMs(a)).toBeCloseTo(a.wallMs, 6);
  });

  it('makes batches of a harness without an account overhead, and still sums to the wall time', async () => {
    const m = await measure('alternate', false);
    const a = m.account!;
    expect(a.sides.base.samplesMs).toBe(0);
    expect(a.sides.base.overheadMs).toBeGreaterThanOrEqual(1000);
    expect(accountSumMs(a)).toBeCloseTo(a.wallMs, 6);
  });
});
