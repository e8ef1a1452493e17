import { describe, expect, it } from 'vitest';
import type { ResultSet } from '../../../pipeline/concepts/asv/index.js';
import {
  applyRule,
  calibrate,
  DEFAULT_PAIRED_OPTIONS,
  pairedOptionsSchema,
  pairedVerdict,
  pairTable,
  verdictOfTables,
} from '../../../stages/validate/paired/index.js';
import { holmRejections } from '../../../stages/validate/paired/holm.js';
import {
  digamma,
  medianStandardError,
  moderatedVariance,
  noisePrior,
  pooledVariance,
  trigamma,
  trigammaInverse,
} from '../../../stages/validate/paired/noise.js';
import { studentTCdf, studentTUpper, studentTUpperQuantile } from '../../../stages/validate/paired/student-t.js';
import { mulberry32 } from '../../helpers/prng.js';
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

/** Evidence of one workload: its pair ratios (as factors), base/base ratios, a bias allowance. */
function ev(ratios: readonly (number | null)[], nullRatios: readonly number[] = [], biasLog = 0) {
  return { logs: ratios.map((r) => (r === null ? null : L(r))), nullLogs: nullRatios.map(L), biasLog };
}

/** Deterministic pseudo-normal noise around 1 (log-normal with the given sd). */
function noisy(seed: number, n: number, sd: number, center = 1): number[] {
  const rand = mulberry32(seed);
  return Array.from({ length: n }, () => {
    const u = 1 - rand();
    const v = rand();
    return center * Math.exp(sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
  });
}

describe('the per-workload rule', () => {
  it('calls a consistent, significant change beyond the floor improved or worsened, and says why not otherwise', () => {
    const quiet = (center: number, seed: number) => ev(noisy(seed, 20, 0.02, center), noisy(seed + 100, 20, 0.02));
    const [faster, slower, same, tiny] = applyRule([quiet(1 / 1.2, 1), quiet(1.3, 2), quiet(1, 3), quiet(1 / 1.03, 4)], opts);
    expect(faster).toMatchObject({ change: 'improved', reason: null, significant: true, pairs: 20 });
    expect(faster!.fasterPairs).toBeGreaterThanOrEqual(15);
    expect(slower).toMatchObject({ change: 'worsened', significant: true });
    expect(same).toMatchObject({ change: 'unchanged', reason: 'not-significant', significant: false });
    // 3% faster, clearly measured with this little noise, but under the 5% floor
    expect(tiny).toMatchObject({ change: 'unchanged', reason: 'below-floor', significant: true });
  });

  it('needs the consistency rule: a median pulled by a few large pairs while most pairs point the other way is not a change', () => {
    const mixed = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.01, 1.01, 1.02, 1.02, 1.01, 1.02, 1.01, 1.01, 1.02];
    const [r] = applyRule([ev(mixed, noisy(5, 20, 0.01))], { ...opts, consistency: 0.75 });
    expect(r).toMatchObject({ fasterPairs: 11, slowerPairs: 9 });
    expect(r!.change).not.toBe('improved');
  });

  it('is incomparable with fewer than minPairs usable pairs or no noise estimate at all', () => {
    const [two, none] = applyRule([ev([0.5, 0.5, null]), ev([])], opts);
    expect(two).toMatchObject({ change: 'too-few-pairs', pairs: 2, pValue: null, mdsLog: null });
    expect(none).toMatchObject({ change: 'too-few-pairs', medianLog: null });
  });

  it('holds each workload to its own noise: the same 10% speedup is found in a quiet workload and not in a noisy one', () => {
    const [quiet, loud] = applyRule(
      [ev(noisy(7, 20, 0.02, 1 / 1.1), noisy(8, 20, 0.02)), ev(noisy(9, 20, 0.3, 1 / 1.1), noisy(10, 20, 0.3))],
      { ...opts, maxPriorDf: 0 },
    );
    expect(quiet!.change).toBe('improved');
    expect(loud!.change).toBe('unchanged');
    expect(Math.exp(quiet!.mdsLog!)).toBeLessThan(Math.exp(loud!.mdsLog!));
    expect(quiet!.noiseLog!).toBeLessThan(0.03);
    expect(loud!.noiseLog!).toBeGreaterThan(0.2);
  });

  it('adds the bias allowance to the effect a workload must clear', () => {
    const ratios = noisy(11, 20, 0.01, 1 / 1.08);
    const [without] = applyRule([ev(ratios)], opts);
    const [withBias] = applyRule([ev(ratios, [], L(1.1))], opts);
    expect(without!.change).toBe('improved');
    expect(withBias!.change).toBe('unchanged');
    expect(withBias!.mdsLog!).toBeGreaterThan(L(1.1));
  });

  it('the minimum detectable speedup is what it says: a speedup just above it is found, one well below it is not', () => {
    const base = noisy(12, 20, 0.15);
    const [probe] = applyRule([ev(base, noisy(13, 20, 0.15))], { ...opts, maxPriorDf: 0 });
    const mds = Math.exp(probe!.mdsLog!);
    expect(mds).toBeGreaterThan(1.05);
    const median = Math.exp(probe!.medianLog!);
    // scale the same noise so that its median sits just beyond (or well inside) the MDS
    const at = (speedup: number) =>
      applyRule(
        [
          ev(
            base.map((r) => r / median / speedup),
            noisy(13, 20, 0.15),
          ),
        ],
        { ...opts, maxPriorDf: 0 },
      )[0]!;
    expect(at(mds * 1.02).change).toBe('improved');
    expect(at(1 + (mds - 1) / 3).change).toBe('unchanged');
  });

  it('controls the chance that any untouched workload of a candidate is flagged (Holm), with heterogeneous and heavy-tailed noise', () => {
    // 600 simulated candidates per shape, every workload untouched, the floor off: at most alpha = 1% of them may flag anything
    const rand = mulberry32(42);
    const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    const shapes = [
      { pairs: 4, calibration: 4, workloads: 32, heavy: false },
      { pairs: 20, calibration: 20, workloads: 32, heavy: true },
      { pairs: 3, calibration: 3, workloads: 5, heavy: false },
    ];
    for (const shape of shapes) {
      let flagged = 0;
      for (let t = 0; t < 600; t++) {
        const evidence = Array.from({ length: shape.workloads }, () => {
          const sd = 0.01 * Math.exp(2.5 * rand());
          const draw = () => (shape.heavy && rand() < 0.1 ? 6 : 1) * sd * normal();
          return { logs: Array.from({ length: shape.pairs }, draw), nullLogs: Array.from({ length: shape.calibration }, draw), biasLog: 0 };
        });
        if (applyRule(evidence, { ...opts, thresholdFloor: 1 }).some((r) => r.significant)) flagged += 1;
      }
      // 1% of 600 is 6; allow for the simulation's own sampling noise (p(X >= 13) < 0.01 under 1%)
      expect(flagged, JSON.stringify(shape)).toBeLessThanOrEqual(12);
    }
  });

  it('refuses options that make no sense', () => {
    expect(pairedOptionsSchema.safeParse({ minPairs: 1 }).success).toBe(false);
    expect(pairedOptionsSchema.safeParse({ consistency: 0.5 }).success).toBe(false);
    expect(pairedOptionsSchema.safeParse({ alpha: 0 }).success).toBe(false);
    expect(pairedOptionsSchema.safeParse({ thresholdFloor: 0.9 }).success).toBe(false);
    expect(pairedOptionsSchema.parse({})).toEqual(opts);
    expect(opts).toMatchObject({ minPairs: 3, consistency: 0.75, alpha: 0.01, thresholdFloor: 1.05, safetyFactor: 1.5, maxPriorDf: 30 });
  });
});

describe('the statistics under the rule', () => {
  it("Student's t distribution agrees with scipy to 1e-9", () => {
    // scipy.stats.t: ppf(0.975, 10), ppf(0.995, 4), cdf(2, 5), sf(10, 20), sf(50, 30)
    expect(studentTUpperQuantile(0.025, 10)).toBeCloseTo(2.228138851986, 9);
    expect(studentTUpperQuantile(0.005, 4)).toBeCloseTo(4.604094871, 8);
    expect(studentTCdf(2, 5)).toBeCloseTo(0.9490302605850709, 12);
    expect(studentTUpper(10, 20) / 1.5818908793571928e-9).toBeCloseTo(1, 9);
    expect(studentTUpper(50, 30) / 9.357708829611355e-31).toBeCloseTo(1, 8);
    expect(studentTCdf(1.959963984540054, Infinity)).toBeCloseTo(0.975, 12);
    expect(studentTUpper(-1, 7)).toBeCloseTo(1 - studentTUpper(1, 7), 14);
  });

  it("Holm's procedure rejects step by step and stops at the first p-value over its bound", () => {
    expect(holmRejections([0.001, 0.04, 0.03, null], 0.05)).toEqual([true, false, false, false]);
    expect(holmRejections([0.02, 0.03, 0.04], 0.05)).toEqual([false, false, false]);
    expect(holmRejections([0.01, 0.02, 0.024], 0.05)).toEqual([true, true, true]);
    expect(holmRejections([], 0.05)).toEqual([]);
  });

  it('fits the noise prior as limma does: alike noises give it weight, scattered ones little', () => {
    const alike = Array.from({ length: 20 }, (_, i) => ({ variance: 0.01 * (1 + 0.05 * Math.sin(i)), df: 6 }));
    const scattered = Array.from({ length: 20 }, (_, i) => ({ variance: 0.01 * Math.exp(3 * Math.sin(i * 7)), df: 6 }));
    expect(noisePrior(alike, 30)).toMatchObject({ df: 30 });
    expect(noisePrior(alike, 30).variance!).toBeCloseTo(0.01, 2);
    expect(noisePrior(scattered, 30).df).toBeLessThan(3);
    // too few workloads to fit a prior: each stands on its own
    expect(noisePrior(alike.slice(0, 5), 30)).toEqual({ variance: null, df: 0 });
    const moderated = moderatedVariance({ variance: 0.04, df: 6 }, { variance: 0.01, df: 6 });
    expect(moderated.df).toBe(12);
    expect(moderated.variance!).toBeCloseTo(0.025, 12);
    expect(digamma(1)).toBeCloseTo(-0.5772156649015329, 10);
    expect(trigamma(1)).toBeCloseTo(Math.PI ** 2 / 6, 10);
    expect(trigamma(trigammaInverse(0.3))).toBeCloseTo(0.3, 10);
  });

  it('clips a burst only with enough residuals, and the median standard error uses the exact small-sample factor', () => {
    const calm = Array.from({ length: 20 }, (_, i) => 0.01 * Math.sin(i));
    const burst = [...calm.slice(0, 19), 2];
    expect(pooledVariance([burst]).variance!).toBeLessThan(10 * pooledVariance([calm]).variance!);
    const few = [0.01, -0.01, 0.0, 2];
    expect(pooledVariance([few]).variance!).toBeGreaterThan(0.9);
    expect(medianStandardError(1, 4)).toBeCloseTo(Math.sqrt(1.1928 / 4), 12);
    expect(medianStandardError(1, 100)).toBeCloseTo(Math.sqrt(Math.PI / 2 / 100), 12);
  });
});

describe('pairs and machine factors', () => {
  it('pairs the i-th invocation of each side, normalizes by the median ratio, and counts the unpaired', () => {
    const base = [inv('b1', suite(5, 1)), inv('b2', suite(5, 1)), inv('b3', suite(5, 1))];
    const expert = [inv('e1', suite(5, 2, { 'bench.w0': 1 })), inv('e2', suite(5, 1))];
    const t = pairTable(base, expert, 5);
    expect(t.unpaired).toBe(1);
    expect(t.pairs.map((p) => [p.first, p.second])).toEqual([
      ['b1', 'e1'],
      ['b2', 'e2'],
    ]);
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
    const expert = [
      inv('e1', suite(6, 1, { 'bench.w2': null }), { 'bench.w0': 'v2' }),
      inv('e2', suite(6, 1, { 'bench.w2': null }), { 'bench.w0': 'v2' }),
    ];
    const report = pairedVerdict({ base, expert });
    const byName = new Map(report.workloads.map((w) => [w.name, w]));
    expect(byName.get('bench.w0')).toMatchObject({ change: 'incomparable', reason: 'benchmark-changed', pairRatios: [null, null] });
    expect(byName.get('bench.w1')).toMatchObject({ change: 'incomparable', reason: 'failed-on-base' });
    expect(byName.get('bench.w2')).toMatchObject({ change: 'incomparable', reason: 'failed-on-expert' });
  });
});

describe('calibration', () => {
  /** Calibration pairs of 10 quiet workloads where the last `count` drift the same way in every pair. */
  function drifting(drift: number, pairs = 6, count = 1) {
    const first = Array.from({ length: pairs }, (_, p) => inv(`a${p}`, suite(10, 1)));
    const second = Array.from({ length: pairs }, (_, p) =>
      inv(
        `b${p}`,
        Object.fromEntries(
          Array.from({ length: 10 }, (_, i) => [`bench.w${i}`, (i >= 10 - count ? drift : 1) * (1 + 0.01 * (((i + p) % 3) - 1))]),
        ),
      ),
    );
    return pairTable(first, second, 5);
  }

  it('finds no bias allowance when base/base pairs show only noise', () => {
    const quiet = calibrate(drifting(1.0), opts);
    expect(quiet.calibrated).toBe(true);
    expect(quiet.biasLog).toBe(0);
    expect(quiet.falsePositives).toMatchObject({ compared: 10, flagged: 0, rate: 0 });
  });

  it('counts, out of sample, a lone workload that drifts consistently on base/base as a false positive', () => {
    const cal = calibrate(drifting(0.8), opts);
    expect(cal.falsePositives).toMatchObject({ compared: 10, flagged: 1, rate: 0.1 });
    expect(cal.falsePositives.workloads[0]).toMatchObject({ name: 'bench.w9', change: 'improved' });
    // one drifting workload in ten hardly moves the 90th percentile of the allowance
    expect(cal.biasLog).toBeLessThan(L(1.05));
  });

  it('turns a drift that many workloads share into an allowance every workload is held to, which then covers it', () => {
    const cal = calibrate(drifting(0.8, 6, 3), opts);
    expect(cal.biasLog).toBeGreaterThan(-L(0.8));
    // held to the allowance of the others (which drift too), none is flagged
    expect(cal.falsePositives).toMatchObject({ compared: 10, flagged: 0 });
    const report = verdictOfTables(drifting(1.0), drifting(0.8, 6, 3), opts);
    expect(report.threshold).toBeCloseTo(Math.exp(cal.biasLog), 12);
    // an expert 20% faster on every pair is then not enough: the machine shows that much between identical processes
    expect(verdictOfTables(drifting(0.8, 6, 10), drifting(0.8, 6, 3), opts).counts.improved).toBe(0);
  });

  it('is uncalibrated with fewer than minCalibrationPairs pairs: no allowance and no rate is claimed', () => {
    const cal = calibrate(drifting(0.6, 1), opts);
    expect(cal).toMatchObject({ calibrated: false, biasLog: 0, falsePositives: { compared: 0, rate: null } });
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
