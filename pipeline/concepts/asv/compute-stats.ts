import { LaplacePosterior, sortedQuantile } from './laplace-posterior.js';
import { binomial } from './stats.js';

/**
 * asv_runner's `compute_stats`: from raw samples, the stored result (the median) and its
 * statistics (99% confidence interval of the median, quartiles, counts), as `asv run` stores them.
 * Needed to summarize pooled samples exactly as asv would have.
 */

/** What `compute_stats` returns beside the median. */
export interface SampleStats {
  readonly ciLower: number;
  readonly ciUpper: number;
  readonly q25: number;
  readonly q75: number;
  readonly repeat: number;
  readonly number: number;
}

/** The linear-interpolation quantile of the samples (asv_runner's `quantile`). */
export function quantile(samples: readonly number[], q: number): number {
  return sortedQuantile(
    [...samples].sort((a, b) => a - b),
    q,
  );
}

/** ln(n!) for a non-negative integer: exact factorial below 171, Stirling's series above. */
function logFactorial(n: number): number {
  if (n < 171) return Math.log(Number(factorial(n)));
  const x = n + 1;
  // ln Γ(x) by Stirling's series; error far below double precision for x > 171
  return (x - 0.5) * Math.log(x) - x + 0.5 * Math.log(2 * Math.PI) + 1 / (12 * x) - 1 / (360 * x ** 3) + 1 / (1260 * x ** 5);
}

const factorials: bigint[] = [1n];
function factorial(n: number): bigint {
  for (let i = factorials.length; i <= n; i++) factorials.push(factorials[i - 1]! * BigInt(i));
  return factorials[n]!;
}

/** Binomial probability mass, computed through log-gamma as asv_runner's `binom_pmf` does. */
export function binomPmf(n: number, k: number, p: number): number {
  if (!(k >= 0 && k <= n)) return 0;
  if (p === 0) return k === 0 ? 1 : 0;
  if (p === 1) return k === n ? 1 : 0;
  return Math.exp(logFactorial(n) - logFactorial(n - k) - logFactorial(k) + k * Math.log(p) + (n - k) * Math.log(1 - p));
}

/**
 * A quantile and a distribution-free confidence interval (y[r−1], y[s−1]) of coverage at least
 * 1 − alpha, from the binomial distribution of order statistics; a bound that no order statistic
 * reaches is ±Infinity (asv_runner's `quantile_ci`).
 */
export function quantileCi(samples: readonly number[], q: number, alphaMin = 0.01): { value: number; ci: readonly [number, number] } {
  const y = [...samples].sort((a, b) => a - b);
  const n = y.length;
  const alpha = Math.min(alphaMin, 1 - alphaMin);
  const pa = alpha / 2;
  const pb = 1 - pa;
  let a = Number.NEGATIVE_INFINITY;
  let b = Number.POSITIVE_INFINITY;
  let F = 0;
  for (let k = 0; k < n; k++) {
    F += binomPmf(n, k, q);
    if (F <= pa) a = y[k]!;
    if (F >= pb) {
      b = y[k]!;
      break;
    }
  }
  return { value: sortedQuantile(y, q), ci: [a, b] };
}

/**
 * The median of the samples and asv's statistics of it; null for no samples. When the order
 * statistics cannot bound the 99% interval (few samples), the Laplace posterior's 99% credible
 * interval extends it beyond the samples.
 */
export function computeStats(samples: readonly number[], number: number): { result: number; stats: SampleStats } | null {
  if (samples.length < 1) return null;
  const { value, ci } = quantileCi(samples, 0.5, 0.99);
  let [a, b] = ci;
  if ((!Number.isFinite(a) || !Number.isFinite(b)) && samples.length > 1) {
    const posterior = new LaplacePosterior(samples);
    if (!Number.isFinite(a)) a = Math.min(posterior.ppf(0.01 / 2), Math.min(...samples));
    if (!Number.isFinite(b)) b = Math.max(posterior.ppf(1 - 0.01 / 2), Math.max(...samples));
  }
  return {
    result: value,
    stats: { ciLower: a, ciUpper: b, q25: quantile(samples, 0.25), q75: quantile(samples, 0.75), repeat: samples.length, number },
  };
}

/** asv's error bar for a result: half the interquartile range (`get_err`). */
export function interquartileError(stats: { readonly q25: number; readonly q75: number }): number {
  return (stats.q75 - stats.q25) / 2;
}

/** Smallest p-value a Mann-Whitney test can reach with samples of sizes m and n: 1 / C(m+n, min). */
export function minimumPValue(m: number, n: number): number {
  return 1 / Number(binomial(m + n, Math.min(m, n)));
}
