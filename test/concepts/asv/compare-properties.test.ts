import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareResultSets,
  computeStats,
  decideWorkload,
  DEFAULT_DECIDE_OPTIONS,
  mannWhitneyU,
  type Mark,
  type Measurement,
  type ResultSet,
} from '../../../pipeline/concepts/asv/index.js';

const SWAPPED: Record<Mark, Mark> = { '-': '+', '+': '-', '!': '*', '*': '!', ' ': ' ', x: 'x' };

const samplesArb = fc.array(fc.double({ min: 1e-7, max: 1, noNaN: true, noDefaultInfinity: true }), { minLength: 1, maxLength: 30 });

/** A measurement as asv stores it: median + compute_stats, samples kept or not; or a failure / skip. */
const measurementArb: fc.Arbitrary<Measurement> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .record({ samples: samplesArb, keep: fc.boolean(), version: fc.constantFrom('v1', 'v1', 'v1', 'v2', null) })
      .map(({ samples, keep, version }) => {
        const { result, stats } = computeStats(samples, 1)!;
        return { value: result, stats, samples: keep ? samples : null, version };
      }),
  },
  { weight: 1, arbitrary: fc.constant<Measurement>({ value: null, stats: null, samples: null, version: 'v1' }) },
  { weight: 1, arbitrary: fc.constant<Measurement>({ value: Number.NaN, stats: null, samples: null, version: 'v1' }) },
);

const sideArb = fc.option(measurementArb, { nil: undefined, freq: 8 });
const optionsArb = fc.record({
  factor: fc.double({ min: 1, max: 3, noNaN: true }),
  useStats: fc.boolean(),
  pThreshold: fc.constant(0.002),
});

describe('compare: properties', () => {
  it('swapping base and head swaps - and + (and ! and *), keeps ~ and inverts the ratio', () => {
    fc.assert(
      fc.property(sideArb, sideArb, optionsArb, (a, b, options) => {
        const forward = decideWorkload(a, b, options);
        const backward = decideWorkload(b, a, options);
        expect(backward.mark).toBe(SWAPPED[forward.mark]);
        expect(backward.tilde).toBe(forward.tilde);
        expect(backward.ratio === null).toBe(forward.ratio === null);
        if (forward.ratio !== null) expect(backward.ratio! * forward.ratio).toBeCloseTo(1, 10);
      }),
      { numRuns: 2000 },
    );
  });

  it('identical inputs give no change', () => {
    fc.assert(
      fc.property(measurementArb, optionsArb, (m, options) => {
        const v = decideWorkload(m, m, options);
        expect(v.mark).toBe(' ');
        expect(v.change).toBe('unchanged');
        expect(v.tilde).toBe(false);
        if (typeof m.value === 'number' && !Number.isNaN(m.value)) expect(v.ratio).toBe(1);
      }),
      { numRuns: 1000 },
    );
  });

  const resultSetArb = (hash: string) =>
    fc
      .uniqueArray(
        fc.record({ name: fc.constantFrom('m.S.time_a', 'm.S.time_b', 'm.time_c', 'n.T.time_d(1)', 'n.T.time_d(2)'), m: measurementArb }),
        {
          selector: (w) => w.name,
          maxLength: 5,
        },
      )
      .map((ws): ResultSet => ({
        source: `${hash}.json`,
        commitHash: hash,
        machineEnv: 'lab/env',
        workloads: ws.map(({ name, m }) => ({
          name,
          key: name.replace(/\(.*$/, ''),
          paramValues: [],
          value: m.value,
          stats: m.stats,
          samples: m.samples,
          version: m.version,
        })),
      }));

  it('swapping whole result sets swaps the marks row by row', () => {
    fc.assert(
      fc.property(resultSetArb('aaaa'), resultSetArb('bbbb'), optionsArb, (base, head, options) => {
        const forward = compareResultSets([base], [head], options);
        const backward = compareResultSets([head], [base], options);
        expect(backward.rows.map((r) => r.name)).toEqual(forward.rows.map((r) => r.name));
        expect(backward.rows.map((r) => r.verdict.mark)).toEqual(forward.rows.map((r) => SWAPPED[r.verdict.mark]));
      }),
      { numRuns: 500 },
    );
  });

  it('comparing a result set with itself changes nothing', () => {
    fc.assert(
      fc.property(resultSetArb('aaaa'), (set) => {
        const report = compareResultSets([set], [set]);
        expect(report.rows.every((r) => r.verdict.mark === ' ' && !r.verdict.tilde)).toBe(true);
      }),
    );
  });
});

describe('compare: every branch of asv compare', () => {
  const ok = (value: number, extra: Partial<Measurement> = {}): Measurement => ({
    value,
    stats: null,
    samples: null,
    version: 'v1',
    ...extra,
  });
  const withSamples = (samples: number[], version = 'v1'): Measurement => {
    const { result, stats } = computeStats(samples, 1)!;
    return { value: result, stats, samples, version };
  };
  const fast = withSamples([1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.0]);
  const slow = withSamples([2.0, 2.02, 1.98, 2.04, 1.96, 2.0, 2.02, 1.98, 2.0, 2.0]);

  it('marks a significant improvement beyond the factor with -', () => {
    expect(decideWorkload(slow, fast)).toMatchObject({
      mark: '-',
      change: 'improved',
      section: 'improved',
      tilde: false,
      ratioText: '0.50',
    });
  });

  it('marks a significant regression with +', () => {
    expect(decideWorkload(fast, slow)).toMatchObject({ mark: '+', change: 'worsened', section: 'worsened', ratioText: '2.00' });
  });

  it('flags ~ for a ratio beyond the factor that is not significant', () => {
    const noisyA = withSamples([1, 3, 1, 3, 1, 3]);
    const noisyB = withSamples([2, 4, 2, 4, 2, 4]);
    const v = decideWorkload(noisyA, noisyB);
    expect(v.mark).toBe(' ');
    expect(v.tilde).toBe(true);
    expect(v.ratioText.startsWith('~')).toBe(true);
  });

  it('ignores statistics with --no-stats, and when a side has a single sample', () => {
    const noisyA = withSamples([1, 3, 1, 3, 1, 3]);
    const noisyB = withSamples([2, 4, 2, 4, 2, 4]);
    expect(decideWorkload(noisyA, noisyB, { ...DEFAULT_DECIDE_OPTIONS, useStats: false }).mark).toBe('+');
    const single = withSamples([1]);
    expect(single.stats?.repeat).toBe(1);
    expect(decideWorkload(single, withSamples([3, 3.1, 2.9])).mark).toBe('+');
  });

  it('keeps a ratio within the factor unchanged, without ~', () => {
    expect(decideWorkload(ok(1), ok(1.05))).toMatchObject({ mark: ' ', tilde: false, ratioText: '1.05' });
    expect(decideWorkload(ok(1), ok(1.2), { ...DEFAULT_DECIDE_OPTIONS, factor: 1.5 })).toMatchObject({ mark: ' ', tilde: false });
  });

  it('marks a changed benchmark version x', () => {
    expect(decideWorkload(ok(1), ok(2, { version: 'v2' }))).toMatchObject({ mark: 'x', change: 'incomparable', section: 'incomparable' });
  });

  it('marks a new failure ! and a fixed failure *', () => {
    const failed = ok(1, { value: null });
    expect(decideWorkload(ok(1), failed)).toMatchObject({
      mark: '!',
      change: 'failed',
      section: 'worsened',
      ratio: null,
      ratioText: 'n/a',
    });
    expect(decideWorkload(failed, ok(1))).toMatchObject({ mark: '*', change: 'fixed', section: 'improved', ratio: null });
  });

  it('leaves both-failed, skipped and one-sided rows unchanged with no ratio', () => {
    const failed = ok(1, { value: null });
    const skipped = ok(Number.NaN);
    expect(decideWorkload(failed, failed)).toMatchObject({ mark: ' ', ratio: null });
    expect(decideWorkload(skipped, ok(1))).toMatchObject({ mark: ' ', ratio: null });
    expect(decideWorkload(undefined, ok(1))).toMatchObject({ mark: ' ', ratio: null, ratioText: 'n/a' });
    expect(decideWorkload(ok(1), undefined)).toMatchObject({ mark: ' ', ratio: null });
  });

  it('has no ratio when the baseline is 0, as asv prints n/a', () => {
    expect(decideWorkload(ok(0), ok(0))).toMatchObject({ mark: ' ', ratio: null, ratioText: 'n/a' });
  });
});

describe('Mann-Whitney U methods', () => {
  it('agrees between the exact distribution and the normal approximation for moderate sizes', () => {
    const x = Array.from({ length: 15 }, (_, i) => i * 1.1);
    const y = Array.from({ length: 15 }, (_, i) => i * 1.1 + 4.05);
    const exact = mannWhitneyU(x, y, 'exact');
    const normal = mannWhitneyU(x, y, 'normal');
    expect(exact.u).toBe(normal.u);
    expect(Math.abs(Math.log(exact.p / normal.p))).toBeLessThan(0.3);
  });

  it('refuses the exact method beyond double precision', () => {
    const big = Array.from({ length: 40 }, (_, i) => i);
    expect(() => mannWhitneyU(big, big, 'exact')).toThrow(RangeError);
    expect(mannWhitneyU(big, big).p).toBeCloseTo(1, 12);
  });
});
