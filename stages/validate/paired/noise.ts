import { median } from './stats.js';

/**
 * A workload's noise: the variance of its pair log ratios around their median, pooled over the
 * groups measured the same way (its base/expert pairs and its base/base pairs), then moderated
 * toward the noise of the candidate's other workloads (empirical Bayes, as limma moderates
 * gene-wise variances): s̃² = (d₀·s₀² + ν·s²) / (d₀ + ν), with ν + d₀ degrees of freedom. A workload
 * with many pairs stands on its own noise; one with few leans on the others'. Pure.
 */

export interface Variance {
  /** Null when no group had two values. */
  readonly variance: number | null;
  /** Degrees of freedom: Σ (group size − 1) over groups of two or more. */
  readonly df: number;
}

export interface NoisePrior {
  /** s₀², the median raw variance over the workloads that have one (null: none has). */
  readonly variance: number | null;
  /** d₀: its weight; 0 when fewer than three workloads gave it. */
  readonly df: number;
}

/** Residuals are clipped at this many robust standard deviations (1.4826 × their median absolute value)… */
const CLIP = 3;
/** …when there are at least this many degrees of freedom (with fewer, the robust scale is itself too noisy). */
const CLIP_MIN_DF = 10;

/**
 * Σ squared deviations from each group's median over Σ (n − 1), each deviation first clipped at
 * CLIP robust standard deviations (winsorized): one pair caught in a burst of load moves the
 * estimate as a large residual would, not as an arbitrarily large one. Normal noise is almost
 * never clipped.
 */
export function pooledVariance(groups: readonly (readonly number[])[]): Variance {
  const residuals: number[] = [];
  let df = 0;
  for (const g of groups) {
    if (g.length < 2) continue;
    const m = median(g)!;
    for (const x of g) residuals.push(x - m);
    df += g.length - 1;
  }
  if (df === 0) return { variance: null, df };
  const robust = 1.4826 * median(residuals.map(Math.abs))!;
  const limit = robust > 0 && df >= CLIP_MIN_DF ? CLIP * robust : Infinity;
  let ss = 0;
  for (const r of residuals) ss += Math.min(Math.abs(r), limit) ** 2;
  return { variance: ss / df, df };
}

/**
 * The prior of the moderation, fitted as limma does (Smyth 2004): the workloads' variances are
 * taken as s₀²·χ²(d₀)/d₀ draws scaled by their own χ²(ν)/ν sampling noise; d₀ and s₀² are found by
 * matching the mean and variance of log s² (digamma, trigamma). Homogeneous noise gives a large d₀
 * (each workload leans on the others), heterogeneous noise a small one (each stands on its own).
 * d₀ is capped at `maxDf`; with fewer than MIN_PRIOR_WORKLOADS workloads there is no prior (fitted
 * from fewer, it let a 5-workload candidate with 3 pairs flag noise 1.6% of the time at alpha 1%).
 */
/** Workloads with a variance needed to fit the prior. */
export const MIN_PRIOR_WORKLOADS = 8;

export function noisePrior(variances: readonly Variance[], maxDf: number): NoisePrior {
  const usable = variances.filter((v): v is { variance: number; df: number } => v.variance !== null && v.variance > 0 && v.df > 0);
  if (usable.length < MIN_PRIOR_WORKLOADS || maxDf <= 0) return { variance: null, df: 0 };
  const e = usable.map((v) => Math.log(v.variance) - digamma(v.df / 2) + Math.log(v.df / 2));
  const mean = e.reduce((a, b) => a + b, 0) / e.length;
  const spread =
    e.reduce((a, x) => a + (x - mean) ** 2, 0) / (e.length - 1) - usable.reduce((a, v) => a + trigamma(v.df / 2), 0) / usable.length;
  if (!(spread > 0)) return { variance: Math.exp(mean), df: maxDf };
  const d0 = Math.min(maxDf, 2 * trigammaInverse(spread));
  return { variance: Math.exp(mean + digamma(d0 / 2) - Math.log(d0 / 2)), df: d0 };
}

/** ψ(x), x > 0: recurrence up to 10, then the asymptotic series. */
export function digamma(x: number): number {
  let r = 0;
  while (x < 10) {
    r -= 1 / x;
    x += 1;
  }
  const f = 1 / (x * x);
  return r + Math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))));
}

/** ψ′(x), x > 0: recurrence up to 10, then the asymptotic series. */
export function trigamma(x: number): number {
  let r = 0;
  while (x < 10) {
    r += 1 / (x * x);
    x += 1;
  }
  const f = 1 / (x * x);
  return r + 1 / x + f / 2 + (f / x) * (1 / 6 - f * (1 / 30 - f * (1 / 42 - f / 30)));
}

/** ψ″(x), x > 0: recurrence up to 10, then the asymptotic series. */
function tetragamma(x: number): number {
  let r = 0;
  while (x < 10) {
    r -= 2 / (x * x * x);
    x += 1;
  }
  const f = 1 / (x * x);
  return r - f * (1 + 1 / x + f * (0.5 - f * (1 / 6 - f * (1 / 6 - f * (3 / 10 - (5 / 6) * f)))));
}

/** The x with ψ′(x) = y, by Newton's method on 1/ψ′ (nearly linear), as limma's trigammaInverse. */
export function trigammaInverse(y: number): number {
  if (y > 1e7) return 1 / Math.sqrt(y);
  if (y < 1e-6) return 1 / y;
  let x = 0.5 + 1 / y;
  for (let i = 0; i < 50; i++) {
    const t = trigamma(x);
    const step = (t * (1 - t / y)) / tetragamma(x);
    x += step;
    if (-step / x < 1e-8) break;
  }
  return x;
}

/** s̃² and its degrees of freedom; null variance when neither the workload nor the prior has one. */
export function moderatedVariance(own: Variance, prior: NoisePrior): Variance {
  const d0 = prior.variance === null ? 0 : prior.df;
  const df = own.df + d0;
  if (df === 0) return { variance: null, df: 0 };
  const ownPart = own.variance === null ? 0 : own.df * own.variance;
  return { variance: (ownPart + d0 * (prior.variance ?? 0)) / df, df };
}

/**
 * n·Var(median of n standard normal values), n = 1..40 (the median of an even count is the mean
 * of the two middle values), computed by numerical integration of the order statistics' densities.
 * It tends to π/2; beyond the table π/2 is used (at most 4% above the truth: conservative).
 */
const MEDIAN_VARIANCE_FACTOR = [
  1.0, 1.0, 1.346, 1.1928, 1.4342, 1.2885, 1.4731, 1.3454, 1.4949, 1.3833, 1.5088, 1.4102, 1.5184, 1.4303, 1.5254, 1.446, 1.5308, 1.4585,
  1.535, 1.4687, 1.5385, 1.4773, 1.5413, 1.4845, 1.5437, 1.4906, 1.5457, 1.496, 1.5474, 1.5007, 1.5489, 1.5048, 1.5503, 1.5085, 1.5514,
  1.5117, 1.5525, 1.5147, 1.5534, 1.5174,
];

/** The standard error of the median of n values of variance v, under normal noise. */
export function medianStandardError(variance: number, n: number): number {
  const factor = MEDIAN_VARIANCE_FACTOR[n - 1] ?? Math.PI / 2;
  return Math.sqrt((factor * variance) / n);
}
