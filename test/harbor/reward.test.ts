import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { packagePath } from '../../pipeline/package-root.js';
import { FAILURE_REWARD, FLOOR_REWARD, REWARD_FORMULA } from '../../stages/emit/publish/harbor/reward-formula.js';

/**
 * The Harbor verifier's reward (perfmine_verify.py, the formula in REWARD_FORMULA) and its check
 * from outside the worker, run with python3 on constructed workloads: what each kind of change
 * earns, and that the text the export documents is the one the verifier applies.
 */

const DIR = packagePath('pipeline', 'services', 'environments');

function python(code: string, input: unknown): unknown {
  const out = execFileSync(
    'python3',
    ['-c', `import sys, json; sys.path.insert(0, ${JSON.stringify(DIR)}); import perfmine_verify as v\n${code}`],
    {
      input: JSON.stringify(input),
      encoding: 'utf8',
    },
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
  outside?: { consistent: boolean; outside_speedup: number } | null;
}

type Reward = Record<string, number>;
const rewardOf = (workloads: Row[], correct = true): Reward =>
  python('d = json.load(sys.stdin)\nprint(json.dumps(v.reward_of(d["w"], d["correct"])))', { w: workloads, correct }) as Reward;

const fib = (speedup: number | null, verdict: string, outside?: Row['outside']): Row => ({
  name: 'bench_core.time_fib',
  task_improved: true,
  expert_speedup: 4,
  expert_verdict: 'improved',
  speedup,
  verdict,
  ...(outside === undefined ? {} : { outside }),
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

  it('the expert matched: 1; half the expert in log terms: 0.5; beyond the expert: above 1', () => {
    expect(rewardOf([fib(4, 'improved'), other(1, 'unchanged')])).toMatchObject({
      reward: 1,
      correct: 1,
      speedup: 4,
      expert_speedup: 4,
      advantage: 0,
    });
    expect(rewardOf([fib(2, 'improved')]).reward).toBeCloseTo(0.5, 12);
    expect(rewardOf([fib(16, 'improved')]).reward).toBeCloseTo(2, 12);
  });

  it('no change, a change the measurement cannot tell from none, a slower one: the floor', () => {
    expect(rewardOf([fib(1, 'unchanged')])).toMatchObject({ reward: 0, speedup: 1, advantage: -3, improved_workloads: 0 });
    expect(rewardOf([fib(1.04, 'unchanged')]).reward).toBe(0);
    expect(rewardOf([fib(0.5, 'worsened')])).toMatchObject({ reward: 0, speedup: 0.5 });
  });

  it('a saving the outside clock does not see is credited with what that clock saw', () => {
    expect(rewardOf([fib(1000, 'improved', { consistent: false, outside_speedup: 1.01 })])['speedup']).toBeCloseTo(1.01, 12);
    expect(rewardOf([fib(3, 'improved', { consistent: true, outside_speedup: 1.5 })])['speedup']).toBeCloseTo(3, 12);
  });

  it('over every workload, each side is credited by its own verdicts', () => {
    const r = rewardOf([fib(4, 'improved'), other(0.5, 'worsened')]);
    expect(r['speedup_all']).toBeCloseTo(Math.sqrt(4 * 0.5), 12);
    expect(r['expert_speedup_all']).toBeCloseTo(Math.sqrt(4 * 1), 12);
    expect(r['advantage_all']).toBeCloseTo(Math.sqrt(2) - 2, 12);
  });
});

describe("the verifier's check from outside the worker", () => {
  /** A measurement as perfmine-bench's interleaved driver records it: samples (seconds per call), number, and per batch the CPU time the kernel counted. */
  const record = (name: string, unit: string, base: number[], working: number[], baseCpu: number[], workingCpu: number[]) => ({
    ref: { name, benchmark: name },
    base: { number: 10, rounds: base.map((s) => [s, s]), cpus: baseCpu, walls: baseCpu, failure: null },
    expert: { number: null, rounds: working.map((s) => [s, s]), cpus: workingCpu, walls: workingCpu, failure: null },
  });
  const m = {
    base: { benchmarks: { honest: { unit: 'seconds' }, liar: { unit: 'seconds' }, tiny: { unit: 'seconds' }, mem: { unit: 'bytes' } } },
    workloads: [
      // 2 samples x 10 calls of 2.5 ms: 50 ms a batch, 0.05 ms with the change; the kernel saw the same saving
      record('honest', 'seconds', [2.5e-3, 2.5e-3, 2.5e-3], [2.5e-6, 2.5e-6, 2.5e-6], [0.06, 0.061, 0.059], [0.011, 0.012, 0.01]),
      // reports the same saving, but the worker spent as much CPU time as the base
      record('liar', 'seconds', [2.5e-3, 2.5e-3, 2.5e-3], [2.5e-6, 2.5e-6, 2.5e-6], [0.06, 0.061, 0.059], [0.06, 0.062, 0.058]),
      // too small a saving to ask the clock about
      record('tiny', 'seconds', [5e-5, 5e-5, 5e-5], [1e-6, 1e-6, 1e-6], [0.01, 0.01, 0.01], [0.01, 0.01, 0.01]),
      record('mem', 'bytes', [1000, 1000, 1000], [10, 10, 10], [0.01, 0.01, 0.01], [0.01, 0.01, 0.01]),
    ],
  };

  it('passes an honest saving, catches one the kernel did not see, leaves small savings and non-time workloads alone', () => {
    const out = python('print(json.dumps(v.outside_check(json.load(sys.stdin), "cpu")))', m) as Record<
      string,
      { consistent: boolean; outside_speedup: number }
    >;
    expect(Object.keys(out).sort()).toEqual(['honest', 'liar', 'tiny']);
    expect(out['honest']).toMatchObject({ consistent: true });
    expect(out['honest']!.outside_speedup).toBeCloseTo(0.06 / 0.011, 9);
    expect(out['liar']).toMatchObject({ consistent: false });
    expect(out['liar']!.outside_speedup).toBeCloseTo(1, 9);
    expect(out['tiny']).toMatchObject({ consistent: true });
  });
});
