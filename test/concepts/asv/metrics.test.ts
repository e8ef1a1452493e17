import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  advantage,
  geometricMean,
  hierarchyKey,
  normalizedAdvantage,
  overallSpeedup,
  speedup,
  stratifiedAdvantage,
  variance,
  workloadHierarchy,
  workloadSpeedups,
} from '../../../pipeline/concepts/asv/index.js';

describe('workload hierarchy', () => {
  it('splits module, class, function and parameters', () => {
    expect(workloadHierarchy("benchmark_algorithms.AlgorithmBenchmarks.time_k_core('Erdos Renyi (100, 0.5)')")).toEqual({
      module: 'benchmark_algorithms',
      className: 'AlgorithmBenchmarks',
      function: 'time_k_core',
      params: "'Erdos Renyi (100, 0.5)'",
    });
    expect(workloadHierarchy('benchmarks.bench_core.Core.time_add(10, 1)')).toEqual({
      module: 'benchmarks.bench_core',
      className: 'Core',
      function: 'time_add',
      params: '10, 1',
    });
    expect(workloadHierarchy('bench_io.time_read')).toEqual({ module: 'bench_io', className: null, function: 'time_read', params: null });
    expect(workloadHierarchy('pkg.sub.time_f')).toEqual({ module: 'pkg.sub', className: null, function: 'time_f', params: null });
  });

  it('groups at module, class and function level', () => {
    const name = 'benchmarks.bench_core.Core.time_add(10)';
    expect(hierarchyKey(name, 'module')).toBe('benchmarks.bench_core');
    expect(hierarchyKey(name, 'class')).toBe('benchmarks.bench_core.Core');
    expect(hierarchyKey(name, 'function')).toBe('benchmarks.bench_core.Core.time_add');
    expect(hierarchyKey('bench_io.time_read', 'class')).toBe('bench_io');
    expect(hierarchyKey('bench_io.time_read', 'function')).toBe('bench_io.time_read');
  });
});

describe('FormulaCode metrics', () => {
  it('speedup is time(base) / time(patched), null for failures and non-positive times', () => {
    expect(speedup(2, 1)).toBe(2);
    expect(speedup(1, 4)).toBe(0.25);
    expect(speedup(null, 1)).toBeNull();
    expect(speedup(1, Number.NaN)).toBeNull();
    expect(speedup(0, 1)).toBeNull();
  });

  it('keeps only workloads timed on both sides', () => {
    const base = new Map<string, number | null>([
      ['a', 2],
      ['b', 3],
      ['c', null],
    ]);
    const patched = new Map<string, number | null>([
      ['a', 1],
      ['c', 1],
    ]);
    expect([...workloadSpeedups(base, patched)]).toEqual([['a', 2]]);
  });

  it('overall speedup is the geometric mean', () => {
    expect(geometricMean([])).toBeNull();
    expect(geometricMean([2, 8])).toBeCloseTo(4, 12);
    expect(
      overallSpeedup(
        new Map([
          ['a', 0.5],
          ['b', 2],
        ]),
      ),
    ).toBeCloseTo(1, 12);
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0.01, max: 100, noNaN: true }), { minLength: 1, maxLength: 20 }), (xs) => {
        const g = geometricMean(xs)!;
        expect(g).toBeGreaterThanOrEqual(Math.min(...xs) * (1 - 1e-12));
        expect(g).toBeLessThanOrEqual(Math.max(...xs) * (1 + 1e-12));
      }),
    );
  });

  it('advantage is speedup(agent) - speedup(expert) on the common workloads', () => {
    const agent = new Map([
      ['m.A.time_x', 4],
      ['m.A.time_y', 1],
      ['only.agent', 100],
    ]);
    const expert = new Map([
      ['m.A.time_x', 2],
      ['m.A.time_y', 2],
    ]);
    expect(advantage(agent, expert)).toBeCloseTo(2 - 2, 12);
    expect(advantage(new Map([['a', 3]]), new Map([['a', 2]]))).toBeCloseTo(1, 12);
    expect(advantage(new Map([['a', 3]]), new Map([['b', 2]]))).toBeNull();
  });

  it('stratified advantage averages per-group advantages', () => {
    const agent = new Map([
      ['m1.A.time_x(1)', 4],
      ['m1.A.time_x(2)', 4],
      ['m1.B.time_y', 1],
      ['m2.time_z', 3],
    ]);
    const expert = new Map([
      ['m1.A.time_x(1)', 1],
      ['m1.A.time_x(2)', 1],
      ['m1.B.time_y', 1],
      ['m2.time_z', 1],
    ]);
    const byClass = stratifiedAdvantage(agent, expert, 'class');
    expect(byClass.strata.map((s) => [s.key, s.workloads])).toEqual([
      ['m1.A', 2],
      ['m1.B', 1],
      ['m2', 1],
    ]);
    [3, 0, 2].forEach((expected, i) => expect(byClass.strata[i]!.advantage).toBeCloseTo(expected, 12));
    expect(byClass.advantage).toBeCloseTo((3 + 0 + 2) / 3, 12);
    const byModule = stratifiedAdvantage(agent, expert, 'module');
    expect(byModule.strata.map((s) => s.key)).toEqual(['m1', 'm2']);
    expect(byModule.strata[0]!.agent).toBeCloseTo(Math.cbrt(16), 12);
    const byFunction = stratifiedAdvantage(agent, expert, 'function');
    expect(byFunction.strata.map((s) => s.key)).toEqual(['m1.A.time_x', 'm1.B.time_y', 'm2.time_z']);
    expect(stratifiedAdvantage(new Map(), new Map(), 'module').advantage).toBeNull();
  });

  it('normalized advantage divides by sqrt(var(agent) + var(expert))', () => {
    expect(variance([1, 3])).toBe(1);
    expect(variance([])).toBeNull();
    const agent = new Map([
      ['a', 1],
      ['b', 4],
    ]);
    const expert = new Map([
      ['a', 1],
      ['b', 1],
    ]);
    // advantage = geomean(1, 4) - 1 = 1; var(agent) = 2.25, var(expert) = 0
    expect(normalizedAdvantage(agent, expert)).toBeCloseTo(1 / 1.5, 12);
    expect(normalizedAdvantage(new Map([['a', 2]]), new Map([['a', 1]]))).toBeNull();
  });
});
