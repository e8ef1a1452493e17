import { erfc } from './erfc.js';

/**
 * asv's statistical decision (`asv/_stats.py`), reproduced so that every answer matches asv's:
 * the Mann-Whitney U test with asv's conservative tie handling (exact distribution for
 * max(m, n) <= 20, normal approximation above), and `is_different`, which uses the test only
 * when the sample sizes allow p < threshold and otherwise asks whether the 99% confidence
 * intervals are disjoint.
 */

/** asv's significance threshold for `is_different`. */
export const P_THRESHOLD = 0.002;

const binomialCache = new Map<number, bigint>();

/** The binomial coefficient C(n, k), exactly (0 outside 0 <= k <= n). */
export function binomial(n: number, k: number): bigint {
  if (!Number.isInteger(n) || !Number.isInteger(k)) throw new RangeError(`binomial(${n}, ${k}): integers expected`);
  if (k < 0 || k > n) return 0n;
  const kk = Math.min(k, n - k);
  const cacheKey = n * 65536 + kk;
  const cached = binomialCache.get(cacheKey);
  if (cached !== undefined) return cached;
  let num = 1n;
  let den = 1n;
  const m = BigInt(n + 1);
  for (let j = 1; j <= kk; j++) {
    num *= m - BigInt(j);
    den *= BigInt(j);
  }
  const value = num / den;
  if (binomialCache.size < 100_000) binomialCache.set(cacheKey, value);
  return value;
}

/** U (the number of pairs with x > y) and the number of tied pairs. */
export function mannWhitneyCounts(x: readonly number[], y: readonly number[]): { u: number; ties: number } {
  let u = 0;
  let ties = 0;
  for (const xx of x) {
    for (const yy of y) {
      if (xx > yy) u++;
      else if (xx === yy) ties++;
    }
  }
  return { u, ties };
}

/**
 * For samples of sizes (m, n): the cumulative distribution of U under the null hypothesis,
 * summed term by term in the same order as asv, so the values are bit-identical to asv's.
 * Counts are exact while C(m+n, m) < 2^53, which covers every size the exact method is used for.
 */
const countTables = new Map<number, Float64Array>();
/** Counts stay exact integers in doubles below 2^53. */
const EXACT_LIMIT = 2n ** 53n;
const cdfTables = new Map<number, Float64Array>();

function countTable(m: number, n: number): Float64Array {
  const key = m * 4096 + n;
  const cached = countTables.get(key);
  if (cached) return cached;
  const table = new Float64Array(m * n + 1);
  if (m === 0 || n === 0) {
    table[0] = 1;
  } else {
    // r(m, n, u) = r(m, n-1, u) + r(m-1, n, u-n)
    const left = countTable(m, n - 1);
    const down = countTable(m - 1, n);
    for (let u = 0; u <= m * n; u++) {
      table[u] = (u < left.length ? left[u]! : 0) + (u - n >= 0 && u - n < down.length ? down[u - n]! : 0);
    }
  }
  countTables.set(key, table);
  return table;
}

function cdfTable(m: number, n: number): Float64Array {
  const key = m * 4096 + n;
  const cached = cdfTables.get(key);
  if (cached) return cached;
  const counts = countTable(m, n);
  const total = Number(binomial(m + n, m));
  const cdf = new Float64Array(counts.length);
  let acc = 0;
  for (let u = 0; u < counts.length; u++) {
    acc += counts[u]! / total;
    cdf[u] = acc;
  }
  cdfTables.set(key, cdf);
  return cdf;
}

/** P(U <= u) for samples of sizes (m, n) under the null hypothesis (asv's `mann_whitney_u_cdf`). */
export function mannWhitneyCdf(m: number, n: number, u: number): number {
  if (u < 0) return 0;
  const cdf = cdfTable(m, n);
  return cdf[Math.min(u, cdf.length - 1)]!;
}

export type MannWhitneyMethod = 'auto' | 'exact' | 'normal';

export interface MannWhitneyResult {
  /** The U statistic after asv's conservative tie breaking. */
  readonly u: number;
  /** Two-sided p-value. */
  readonly p: number;
}

/**
 * The two-sided Mann-Whitney U test as asv computes it (`asv._stats.mann_whitney_u`): ties are
 * broken in the least significant way; `auto` uses the exact distribution when
 * max(m, n) <= 20 and the normal approximation (no continuity or tie correction) above.
 * With an empty sample (which asv never tests) it returns u = 0, p = 1. Forcing `exact` on sizes
 * whose C(m+n, m) exceeds 2^53 throws a RangeError (asv's big integers have no such limit).
 */
export function mannWhitneyU(x: readonly number[], y: readonly number[], method: MannWhitneyMethod = 'auto'): MannWhitneyResult {
  const m = x.length;
  const n = y.length;
  const resolved = method === 'auto' ? (Math.max(m, n) > 20 ? 'normal' : 'exact') : method;
  const counts = mannWhitneyCounts(x, y);
  let u = counts.u;
  let ties = counts.ties;
  if (m === 0 || n === 0) return { u: 0, p: 1 };
  const mn = m * n;
  const half = Math.floor(mn / 2);

  // Conservative tie breaking
  if (u <= half && u + ties >= half) ties = half - u;
  const ux1 = Math.min(u, mn - u);
  const ux2 = Math.min(u + ties, mn - (u + ties));
  let ux: number;
  if (ux1 >= ux2) {
    ux = ux1;
  } else {
    u = u + ties;
    ux = ux2;
  }

  let p: number;
  if (resolved === 'exact') {
    if (binomial(m + n, m) > EXACT_LIMIT)
      throw new RangeError(`mannWhitneyU: the exact distribution for sizes ${m} and ${n} exceeds double precision; use 'normal'`);
    const p1 = mannWhitneyCdf(m, n, ux);
    const p2 = 1.0 - mannWhitneyCdf(m, n, Math.max(half, mn - ux - 1));
    p = p1 + p2;
  } else {
    const total = m + n;
    const variance = (mn * (total + 1)) / 12;
    const z = (ux - mn / 2) / Math.sqrt(variance);
    const cdf = 0.5 * erfc(-z / Math.SQRT2);
    p = 2 * cdf;
  }
  return { u, p };
}

/** The 99% confidence interval of a median, as asv stores it (`ci_99_a`, `ci_99_b`). */
export interface ConfidenceInterval {
  readonly ciLower: number;
  readonly ciUpper: number;
}

function withoutNaN(samples: readonly number[]): number[] {
  return samples.filter((s) => !Number.isNaN(s));
}

/**
 * Whether two measurements are statistically different (asv's `is_different`). With samples on
 * both sides and enough of them that the smallest possible p-value, 1 / C(m+n, min(m,n)), is
 * below the threshold: Mann-Whitney U, p < threshold (NaN samples are dropped first). Otherwise
 * the pessimistic check: different only when the 99% confidence intervals do not overlap.
 * `true` means significant; `false` means it might or might not be.
 */
export function isDifferent(
  samplesA: readonly number[] | null,
  samplesB: readonly number[] | null,
  statsA: ConfidenceInterval,
  statsB: ConfidenceInterval,
  pThreshold: number = P_THRESHOLD,
): boolean {
  if (samplesA !== null && samplesB !== null) {
    const a = withoutNaN(samplesA);
    const b = withoutNaN(samplesB);
    const pMin = 1 / Number(binomial(a.length + b.length, Math.min(a.length, b.length)));
    if (pMin < pThreshold) return mannWhitneyU(a, b).p < pThreshold;
  }
  // If the confidence intervals overlap, the difference is not established.
  if (statsA.ciUpper >= statsB.ciLower && statsA.ciLower <= statsB.ciUpper) return false;
  return true;
}
