import { describe, expect, it } from 'vitest';
import type { ResultSet } from '../../../stages/validate/asv/index.js';
import { applyRule, calibrate, DEFAULT_PAIRED_OPTIONS, pairedOptionsSchema, pairedVerdict, pairTable } from '../../../stages/validate/paired/index.js';
import { median, shorthMedian } from '../../../stages/validate/paired/stats.js';

const L = Math.log;
const opts = DEFAULT_PAIRED_OPTIONS;

/** One invocation: workload name → median (null: failed), with optional benchmark versions. */
function inv(source: string, values: Record<string, number | null>, versions: Record<string, string> = {}): ResultSet {
  return {
    source,
    commitHash: 'c0ffee',
    machineEnv: 'perfmine/existing-py',
    workloads: Object.entries(values).map(([name, value]) => ({
      name,
      key: name,
      paramValues: [],
      value,
      stats: null,
      samples: null,
      version: versions[name] ?? 'v1',
    })),
  };
}

/** n workloads w0..w(n-1) all at `base`, with overrides. */
function suite(n: number, base: number, overrides: Record<string, number | null> = {}): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (let i = 0; i < n; i++) out[`bench.w${i}`] = base;
  return { ...out, ...overrides };
}

describe('the per-workload rule', () => {
  const logT = L(1.2);

  it('calls a workload improved only when every pair is faster and the median clears the threshold', () => {
    expect(applyRule([L(0.7), L(0.8), L(0.75)], logT, opts)).toMatchObject({ change: 'improved', pairs: 3, fasterPairs: 3, slowerPairs: 0 });
    expect(applyRule([L(0.7), L(1.01), L(0.75)], logT, opts).change).toBe('unchanged');
    expect(applyRule([L(0.9), L(0.9), L(0.9)], logT, opts).change).toBe('unchanged');
    expect(applyRule([L(1.3), L(1.5), L(1.4)], logT, opts).change).toBe('worsened');
    // two pairs are too few by default: their median is their mean, and one spike decides it
    expect(applyRule([L(0.65), L(0.99)], logT, opts).change).toBe('too-few-pairs');
  });

  it('allows the configured number of disagreeing pairs', () => {
    expect(applyRule([L(0.7), L(1.01), L(0.75)], logT, { minPairs: 2, allowedDisagreeing: 1 }).change).toBe('improved');
    expect(applyRule([L(0.7), L(1.01), L(1.05)], logT, { minPairs: 2, allowedDisagreeing: 1 }).change).toBe('unchanged');
  });

  it('counts a pair at exactly 1 as disagreeing, and needs minPairs usable pairs', () => {
    expect(applyRule([L(0.5), L(0.5), 0], logT, opts).change).toBe('unchanged');
    expect(applyRule([L(0.5), L(0.5), null], logT, opts)).toMatchObject({ change: 'too-few-pairs', pairs: 2 });
    expect(applyRule([], logT, opts)).toMatchObject({ change: 'too-few-pairs', medianLog: null });
  });

  it('takes the median of an even count as the mean of the middle two (in log space)', () => {
    const r = applyRule([L(0.5), L(0.8)], logT, { ...opts, minPairs: 2 });
    expect(Math.exp(r.medianLog!)).toBeCloseTo(Math.sqrt(0.4), 12);
  });

  it('refuses options that would let a verdict rest on no consistent pair', () => {
    expect(pairedOptionsSchema.safeParse({ minPairs: 2, allowedDisagreeing: 2 }).success).toBe(false);
    expect(pairedOptionsSchema.safeParse({ thresholdFloor: 0.9 }).success).toBe(false);
    expect(pairedOptionsSchema.parse({})).toEqual(opts);
    expect(opts).toMatchObject({ minPairs: 3, allowedDisagreeing: 0, thresholdFloor: 1.05, safetyFactor: 1.5, spreadQuantile: 0.95 });
  });
});

describe('pairs and machine factors', () => {
  it('pairs the i-th invocation of each side, normalizes by the median ratio, and counts the unpaired', () => {
    const base = [inv('b1', suite(5, 1)), inv('b2', suite(5, 1)), inv('b3', suite(5, 1))];
    const expert = [inv('e1', suite(5, 2, { 'bench.w0': 1 })), inv('e2', suite(5, 1))];
    const t = pairTable(base, expert, 5);
    expect(t.unpaired).toBe(1);
    expect(t.pairs.map((p) => [p.first, p.second])).toEqual([['b1', 'e1'], ['b2', 'e2']]);
    expect(Math.exp(t.pairs[0]!.logFactor)).toBeCloseTo(2, 12);
    expect(t.pairs[0]!.normalizedLogs.map((l) => Math.exp(l!))).toEqual([0.5, 1, 1, 1, 1].map((x) => expect.closeTo(x, 12)));
  });

  it('does not normalize a pair with fewer workloads than minNormalizationWorkloads', () => {
    const t = pairTable([inv('b', suite(3, 1))], [inv('e', suite(3, 2))], 5);
    expect(t.pairs[0]).toMatchObject({ normalized: false, logFactor: 0, factorWorkloads: 0 });
    expect(Math.exp(t.pairs[0]!.normalizedLogs[0]!)).toBeCloseTo(2, 12);
  });

  it('makes workloads with a changed benchmark, or failed on a side, incomparable and says why', () => {
    const base = [inv('b1', suite(6, 1, { 'bench.w1': null }), { 'bench.w0': 'v1' }), inv('b2', suite(6, 1, { 'bench.w1': null }))];
    const expert = [inv('e1', suite(6, 1, { 'bench.w2': null }), { 'bench.w0': 'v2' }), inv('e2', suite(6, 1, { 'bench.w2': null }), { 'bench.w0': 'v2' })];
    const report = pairedVerdict({ base, expert });
    const byName = new Map(report.workloads.map((w) => [w.name, w]));
    expect(byName.get('bench.w0')).toMatchObject({ change: 'incomparable', reason: 'benchmark-changed', pairRatios: [null, null] });
    expect(byName.get('bench.w1')).toMatchObject({ change: 'incomparable', reason: 'failed-on-base' });
    expect(byName.get('bench.w2')).toMatchObject({ change: 'incomparable', reason: 'failed-on-expert' });
  });
});

describe('calibration', () => {
  /** Calibration pairs of 10 quiet workloads where w9 drifts the same way in every pair. */
  function drifting(drift: number, pairs = 3) {
    const first = Array.from({ length: pairs }, (_, p) => inv(`a${p}`, suite(10, 1)));
    const second = Array.from({ length: pairs }, (_, p) =>
      inv(`b${p}`, Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`bench.w${i}`, i === 9 ? drift : 1 + 0.01 * (((i + p) % 3) - 1)]))),
    );
    return pairTable(first, second, 5);
  }

  it('derives the threshold from a high quantile of base/base spread times the safety factor, never below the floor', () => {
    const quiet = calibrate(drifting(1.0), opts);
    expect(quiet.calibrated).toBe(true);
    expect(quiet.threshold).toBe(1.05); // spread ~1%: the floor wins
    const noisy = calibrate(drifting(1.0), { ...opts, thresholdFloor: 1 });
    expect(Math.log(noisy.threshold)).toBeCloseTo(1.5 * noisy.spreadLog!, 12);
  });

  it('counts, out of sample, a workload that drifts consistently on base/base as a false positive', () => {
    const cal = calibrate(drifting(0.6), opts);
    expect(cal.falsePositives).toMatchObject({ compared: 10, flagged: 1, rate: 0.1 });
    expect(cal.falsePositives.workloads[0]).toMatchObject({ name: 'bench.w9', change: 'improved' });
    // in sample, the drift would have raised its own threshold
    expect(cal.threshold).toBeGreaterThan(1.05);
  });

  it('is uncalibrated with fewer than minCalibrationPairs pairs: the threshold is the floor and no rate is claimed', () => {
    const cal = calibrate(drifting(0.6, 1), opts);
    expect(cal).toMatchObject({ calibrated: false, threshold: 1.05, spreadLog: null, falsePositives: { compared: 0, rate: null } });
    const report = pairedVerdict({ base: [inv('b', suite(6, 1))], expert: [inv('e', suite(6, 1))] });
    expect(report.calibration.calibrated).toBe(false);
    expect(report.threshold).toBe(1.05);
  });
});

describe('the machine factor estimator', () => {
  it('is the median of the densest half: untouched by a large minority that moved together', () => {
    // four workloads untouched (noise of a few %), two 16x and 30x slower, in log space
    const logs = [Math.log(0.97), Math.log(1.0), Math.log(1.01), Math.log(1.02), Math.log(16), Math.log(30)];
    expect(Math.exp(shorthMedian(logs)!)).toBeCloseTo(Math.sqrt(1.0 * 1.01), 12);
    // the plain median is dragged into the upper half of the untouched ones
    expect(Math.exp(median(logs)!)).toBeCloseTo(Math.sqrt(1.01 * 1.02), 12);
    expect(shorthMedian([])).toBeNull();
    expect(shorthMedian([3])).toBe(3);
    // without a moved minority it is close to the median, and it follows a whole-machine shift
    const noise = [-0.03, -0.01, 0, 0.01, 0.02, 0.04];
    expect(shorthMedian(noise.map((x) => x + 0.3))! - shorthMedian(noise)!).toBeCloseTo(0.3, 12);
  });
});
