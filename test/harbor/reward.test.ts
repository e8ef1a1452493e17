import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { packagePath } from '../../pipeline/package-root.js';
import { FAILURE_REWARD, FLOOR_REWARD, REWARD_FORMULA } from '../../pipeline/services/verifier/reward-formula.js';

/**
 * The verifier's reward and credit (perfmine_verify_credit.py, the formula in REWARD_FORMULA), run
 * with python3 on constructed measurements: what each kind of change earns, that the text the
 * export documents is the one the verifier applies, the check from outside the workers (CPU time
 * of a side's processes against what its workers report, within what calibration shows), and the
 * signals of a workload fast only on the inputs it was timed with.
 */

const DIR = packagePath('python');

function python(code: string, input: unknown): unknown {
  const out = execFileSync(
    'python3',
    ['-c', `import sys, json; sys.path.insert(0, ${JSON.stringify(DIR)}); import perfmine_verify_credit as v\n${code}`],
    { input: JSON.stringify(input), encoding: 'utf8' },
  );
  return JSON.parse(out);
}

interface Row {
  name: string;
  task_improved: boolean;
  expert_speedup: number | null;
  expert_verdict: string;
  speedup: number | null;
  verdict: string;
  reference_speedup?: number | null;
  reference_verdict?: string | null;
  vs_reference_log?: number | null;
}

type Reward = Record<string, number>;
const rewardOf = (workloads: Row[], correct = true): Reward =>
  python('d = json.load(sys.stdin)\nprint(json.dumps(v.reward_of(d["w"], d["correct"])))', { w: workloads, correct }) as Reward;

const fib = (speedup: number | null, verdict: string, reference?: [number, string]): Row => ({
  name: 'bench_core.time_fib',
  task_improved: true,
  expert_speedup: 4,
  expert_verdict: 'improved',
  speedup,
  verdict,
  ...(reference ? { reference_speedup: reference[0], reference_verdict: reference[1] } : {}),
});
const other = (speedup: number, verdict: string): Row => ({
  name: 'bench_core.time_sum_of_squares',
  task_improved: false,
  expert_speedup: 1.02,
  expert_verdict: 'unchanged',
  speedup,
  verdict,
});

describe("the Harbor verifier's reward", () => {
  it('is the text the export documents', () => {
    expect(python('print(json.dumps([v.REWARD_FORMULA, v.FAILURE_REWARD, v.FLOOR_REWARD]))', null)).toEqual([
      REWARD_FORMULA,
      FAILURE_REWARD,
      FLOOR_REWARD,
    ]);
  });

  it('a change that fails a check: the failure reward, nothing else', () => {
    expect(rewardOf([fib(4, 'improved')], false)).toEqual({ reward: -1, correct: 0 });
  });

  it("against the expert's patch measured in the same run: 1 when matched, 0.5 at half in log terms, above 1 beyond", () => {
    const matched = rewardOf([fib(3, 'improved', [3, 'improved']), other(1, 'unchanged')]);
    expect(matched).toMatchObject({ correct: 1, expert_measured: 1 });
    expect(matched['reward']).toBeCloseTo(1, 12);
    expect(matched['speedup']).toBeCloseTo(3, 12);
    expect(matched['expert_speedup']).toBeCloseTo(3, 12);
    expect(matched['advantage']).toBeCloseTo(0, 12);
    expect(matched['expert_speedup_all']).toBeCloseTo(Math.sqrt(3 * 1), 12);
    expect(rewardOf([fib(2, 'improved', [4, 'improved'])]).reward).toBeCloseTo(0.5, 12);
    expect(rewardOf([fib(16, 'improved', [4, 'improved'])]).reward).toBeCloseTo(2, 12);
  });

  it("validate's recorded speedups when the expert's patch was not measured, or shows no improvement in this run", () => {
    expect(rewardOf([fib(4, 'improved')])).toMatchObject({ reward: 1, expert_speedup: 4, expert_measured: 0 });
    expect(rewardOf([fib(2, 'improved', [1.01, 'unchanged'])])).toMatchObject({ expert_speedup: 4, expert_measured: 0 });
  });

  it("the expert's measured speedups as they are, not credited: one the run's verdict missed does not shrink the denominator", () => {
    const prime = (speedup: number, verdict: string, reference: [number, string]): Row => ({
      ...fib(speedup, verdict, reference),
      name: 'bench_core.time_is_prime',
    });
    const r = rewardOf([fib(1.4, 'improved', [1.4, 'improved']), prime(1.3, 'improved', [1.3, 'unchanged'])]);
    expect(r['expert_speedup']).toBeCloseTo(Math.sqrt(1.4 * 1.3), 12);
    expect(r['reward']).toBeCloseTo(1, 12);
  });

  it("with the paired comparison against the expert's patch: the expert's speedup times the change's over it, per workload", () => {
    // the change measured 1.5x over the base, but round by round 6% faster than the expert's 1.4x
    const r = rewardOf([{ ...fib(1.5, 'improved', [1.4, 'improved']), vs_reference_log: Math.log(1.06) }]);
    expect(r['speedup']).toBeCloseTo(1.4 * 1.06, 12);
    expect(r['reward']).toBeCloseTo(Math.log(1.4 * 1.06) / Math.log(1.4), 12);
    // within 5% of the expert's patch either way: the expert's measured speedup exactly
    for (const ratio of [1.049, 1 / 1.049, 1]) {
      const tie = rewardOf([{ ...fib(1.5, 'improved', [1.4, 'improved']), vs_reference_log: Math.log(ratio) }]);
      expect(tie['speedup']).toBeCloseTo(1.4, 12);
      expect(tie['reward']).toBeCloseTo(1, 12);
    }
    // beyond it, slower than the expert's patch
    expect(rewardOf([{ ...fib(1.2, 'improved', [1.4, 'improved']), vs_reference_log: Math.log(0.94) }])['speedup']).toBeCloseTo(
      1.4 * 0.94,
      12,
    );
    // a verdict that cannot tell the change from none still credits 1, whatever the pairing says
    expect(rewardOf([{ ...fib(1.02, 'unchanged', [1.4, 'improved']), vs_reference_log: Math.log(0.73) }]).reward).toBe(0);
  });

  it('the paired comparison: the median over rounds of log(reference / working), from rounds both measured', () => {
    const rounds = (values: (number | null)[]) => values.map((x) => (x === null ? null : [x, x * 1.01, x * 0.99]));
    const m = {
      workloads: [
        {
          ref: { name: 'w' },
          expert: { rounds: rounds([1.0, 1.0, 2.0, 1.0, null]), failure: null },
          reference: { rounds: rounds([1.02, 1.05, 1.0, 1.01, 1.0]), failure: null },
        },
        {
          ref: { name: 'few' },
          expert: { rounds: rounds([1, 1, null]), failure: null },
          reference: { rounds: rounds([1, 1, 1]), failure: null },
        },
      ],
    };
    const got = python('print(json.dumps(v.against_reference(json.load(sys.stdin))))', m) as Record<string, number>;
    // rounds 0..3: log(1.02), log(1.05), log(0.5), log(1.01) -> median of the four
    expect(got['w']).toBeCloseTo((Math.log(1.02) + Math.log(1.01)) / 2, 12);
    expect(got).not.toHaveProperty('few');
  });

  it('no change, a change the measurement cannot tell from none, a slower one: the floor', () => {
    expect(rewardOf([fib(1, 'unchanged')])).toMatchObject({ reward: 0, speedup: 1, advantage: -3, improved_workloads: 0 });
    expect(rewardOf([fib(1.04, 'unchanged')]).reward).toBe(0);
    expect(rewardOf([fib(0.5, 'worsened')])).toMatchObject({ reward: 0, speedup: 0.5 });
  });

  it('over every workload, each side is credited by its own verdicts', () => {
    const r = rewardOf([fib(4, 'improved'), other(0.5, 'worsened')]);
    expect(r['speedup_all']).toBeCloseTo(Math.sqrt(4 * 0.5), 12);
    expect(r['expert_speedup_all']).toBeCloseTo(Math.sqrt(4 * 1), 12);
    expect(r['advantage_all']).toBeCloseTo(Math.sqrt(2) - 2, 12);
  });
});

/**
 * A measurement as perfmine_bench_interleave.py records it for a verifier: per side and round the
 * samples (seconds per call), `number`, the calls the batch made ((samples + 1) x number: the
 * counted warm-up) and the CPU time of the side's processes counted from outside. Each batch has
 * 5 ms of work besides its calls (setup, pipes); `jitter` moves that by a fraction of a
 * millisecond from round to round, as on a real machine.
 */
const ROUNDS = 6;
const jitter = [0, 0.0004, -0.0003, 0.0002, -0.0001, 0.0003];
function side(perCall: number, number: number, actual: number = perCall, shift = 0) {
  const samples = 5;
  const calls = (samples + 1) * number;
  return {
    number,
    rounds: jitter.map(() => Array.from({ length: samples }, () => perCall)),
    calls: jitter.map(() => calls),
    cpus: jitter.map((j, r) => calls * actual + 0.005 + j * (r % 2 ? 1 : -1) + shift),
    walls: jitter.map(() => null),
    failure: null,
  };
}
function measurement(working: ReturnType<typeof side>, calibration = side(0.001, 10, 0.001, 0.0001)) {
  return {
    base: { benchmarks: { w: { unit: 'seconds' } } },
    workloads: [{ ref: { name: 'w', benchmark: 'w' }, base: side(0.001, 10), expert: working, calibration }],
    rounds: ROUNDS,
  };
}

describe("the verifier's check from outside the workers", () => {
  const check = (m: unknown) =>
    (
      python('print(json.dumps(v.outside_check(json.load(sys.stdin), "cpu")))', m) as Record<
        string,
        { consistent: boolean; median_log_q: number; tolerance: number; calibrated: boolean }
      >
    )['w']!;

  it('passes an honest saving: twice as fast, its processes did half the work per call (its own `number`)', () => {
    const c = check(measurement(side(0.0005, 20)));
    expect(c).toMatchObject({ consistent: true, calibrated: true });
    expect(Math.abs(c.median_log_q)).toBeLessThan(0.01);
  });

  it('catches a side that reports a hundredth of the work its processes did (a lying clock)', () => {
    const c = check(measurement(side(0.00001, 10, 0.001)));
    expect(c.consistent).toBe(false);
    expect(c.median_log_q).toBeCloseTo(Math.log(100), 1);
  });

  it("tolerates what two honest workers of the base's code differ by, and at least 3%; not more", () => {
    // the working side reports 2% less than its processes did: within the floor
    expect(check(measurement(side(0.00049, 20, 0.0005))).consistent).toBe(true);
    // a calibration worker whose outside count runs 8% high: the tolerance widens to it
    const loose = side(0.001, 10, 0.00108);
    expect(check(measurement(side(0.00047, 20, 0.0005), loose))).toMatchObject({ consistent: true });
    expect(check(measurement(side(0.0004, 20, 0.0005), loose))).toMatchObject({ consistent: false });
  });

  it("credits an inconsistent side with its outside time, so the lie's speedup is gone", () => {
    const m = measurement(side(0.00001, 10, 0.001));
    const credited = python(
      'm = json.load(sys.stdin)\nc = v.credited_measurement(m, v.outside_check(m, "cpu"))\nprint(json.dumps(c["workloads"][0]["expert"]["rounds"]))',
      m,
    ) as number[][];
    for (const round of credited) for (const s of round) expect(s).toBeCloseTo(0.001, 5);
  });
});

describe('fast only on the inputs it was timed with', () => {
  const call = (fn: string, arg: unknown) => python(`print(json.dumps(v.${fn}(json.load(sys.stdin))))`, arg) as boolean;

  it('cached: a first call far slower than a repeated one, beyond the base and the expert', () => {
    expect(call('cached', { base: 1.4, working: 80, reference: 1.5 })).toBe(true);
    expect(call('cached', { base: 1.4, working: 2.1, reference: 1.9 })).toBe(false);
    // the expert's own patch warms up as much: not the agent's cache
    expect(call('cached', { base: 1.4, working: 9, reference: 8 })).toBe(false);
  });

  it("special-cased: the timed inputs far cheaper than comparable ones, beyond what the expert's patch makes them", () => {
    expect(call('special_cased', { base: 1.1, working: 0.01, reference: 1.05 })).toBe(true);
    expect(call('special_cased', { base: 1.1, working: 1.2, reference: 1.05 })).toBe(false);
  });

  it('two-faced: far faster under the harness than the probe finds it on the same inputs, where those calls are the work', () => {
    const twoFaced = (speedup: number, timed: Record<string, number>, coverage: number) =>
      python('d = json.load(sys.stdin)\nprint(json.dumps(v.two_faced(d["s"], d["e"], d["t"], d["c"])))', {
        s: speedup,
        e: 1.4,
        t: timed,
        c: coverage,
      }) as boolean;
    // 14x under the harness; the probe finds the working side as fast as the base
    expect(twoFaced(14, { base: 2.6e-5, working: 2.7e-5, reference: 1.8e-5 }, 0.99)).toBe(true);
    // honest: the probe finds the same 1.4x
    expect(twoFaced(1.4, { base: 2.6e-5, working: 1.85e-5, reference: 1.8e-5 }, 0.99)).toBe(false);
    // the calls the probe times are a small part of the benchmark: nothing to say
    expect(twoFaced(14, { base: 2.6e-5, working: 2.7e-5, reference: 1.8e-5 }, 0.2)).toBe(false);
  });
});
