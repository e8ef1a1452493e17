import { describe, expect, it } from 'vitest';
import { computeStats, isDifferent, mannWhitneyU } from '../../../pipeline/concepts/asv/index.js';
import { readReference, REFERENCE_DIR } from './reference.js';

interface VectorStats {
  ci_99_a: number | string;
  ci_99_b: number | string;
  q_25: number;
  q_75: number;
  repeat: number;
  number: number;
}
interface VectorCase {
  a: (number | string)[];
  b: (number | string)[];
  use_samples: boolean;
  stats_a: VectorStats;
  stats_b: VectorStats;
  median_a: number;
  median_b: number;
  mann_whitney_u: { u: number; p: number };
  is_different: boolean;
}

const vectors = JSON.parse(readReference(`${REFERENCE_DIR}asv-stats/vectors.json`)) as { p_threshold: number; cases: VectorCase[] };

/** The file writes NaN and infinite bounds as strings. */
function num(v: number | string): number {
  if (v === 'NaN') return Number.NaN;
  if (v === 'Infinity') return Number.POSITIVE_INFINITY;
  if (v === '-Infinity') return Number.NEGATIVE_INFINITY;
  if (typeof v === 'number') return v;
  throw new Error(`unexpected value ${v}`);
}
const finite = (xs: (number | string)[]) => xs.map(num).filter((x) => !Number.isNaN(x));
const ci = (s: VectorStats) => ({ ciLower: num(s.ci_99_a), ciUpper: num(s.ci_99_b) });

function relativeError(actual: number, expected: number): number {
  if (actual === expected) return 0;
  return Math.abs(actual - expected) / Math.abs(expected);
}

describe("asv's statistics on its own 400 reference cases", () => {
  it('has the 400 cases', () => {
    expect(vectors.cases).toHaveLength(400);
    expect(vectors.p_threshold).toBe(0.002);
  });

  it('reproduces every is_different decision exactly', () => {
    const mismatches = vectors.cases.flatMap((c, i) => {
      const a = c.use_samples ? c.a.map(num) : null;
      const b = c.use_samples ? c.b.map(num) : null;
      const got = isDifferent(a, b, ci(c.stats_a), ci(c.stats_b), vectors.p_threshold);
      return got === c.is_different ? [] : [{ case: i, expected: c.is_different, got }];
    });
    expect(mismatches).toEqual([]);
    // both outcomes and both paths (samples, CI only) are exercised
    expect(vectors.cases.filter((c) => c.is_different).length).toBeGreaterThan(50);
    expect(vectors.cases.filter((c) => !c.use_samples).length).toBeGreaterThan(50);
  });

  it('reproduces every Mann-Whitney U exactly and p to 1e-9 relative error', () => {
    let worst = 0;
    for (const [i, c] of vectors.cases.entries()) {
      const r = mannWhitneyU(finite(c.a), finite(c.b));
      expect(r.u, `case ${i}: u`).toBe(c.mann_whitney_u.u);
      const err = relativeError(r.p, c.mann_whitney_u.p);
      expect(err, `case ${i}: p ${r.p} vs ${c.mann_whitney_u.p}`).toBeLessThan(1e-9);
      worst = Math.max(worst, err);
    }
    expect(worst).toBeLessThan(1e-9);
  });

  it('covers both the exact distribution and the normal approximation', () => {
    const sizes = vectors.cases.map((c) => Math.max(finite(c.a).length, finite(c.b).length));
    expect(sizes.some((s) => s <= 20)).toBe(true);
    expect(sizes.some((s) => s > 20)).toBe(true);
  });

  it('reproduces compute_stats (median, 99% CI, quartiles) to 1e-12 relative error', () => {
    for (const [i, c] of vectors.cases.entries()) {
      for (const side of ['a', 'b'] as const) {
        const got = computeStats(finite(c[side]), 1);
        expect(got, `case ${i}${side}`).not.toBeNull();
        const expected = side === 'a' ? c.stats_a : c.stats_b;
        const median = side === 'a' ? c.median_a : c.median_b;
        expect(relativeError(got!.result, median), `case ${i}${side} median`).toBeLessThan(1e-12);
        expect(got!.stats.repeat).toBe(expected.repeat);
        expect(got!.stats.number).toBe(expected.number);
        for (const [mine, theirs] of [
          [got!.stats.ciLower, num(expected.ci_99_a)],
          [got!.stats.ciUpper, num(expected.ci_99_b)],
          [got!.stats.q25, expected.q_25],
          [got!.stats.q75, expected.q_75],
        ] as const) {
          expect(relativeError(mine, theirs), `case ${i}${side}: ${mine} vs ${theirs}`).toBeLessThan(1e-12);
        }
      }
    }
  });
});
