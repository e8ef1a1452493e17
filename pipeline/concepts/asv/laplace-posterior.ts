/**
 * The posterior of a location β under Laplace noise with a 1/σ prior,
 * p(β | y) ∝ (Σ_j |y_j − β|)^{−(ν+1)}, ν = len(y) − 1, as asv_runner uses it to widen a median's
 * confidence interval beyond the samples when there are too few for a nonparametric one.
 * The CDF is integrated piecewise between the sorted samples, where Σ|y_j − β| = Y + cβ is linear.
 */
export class LaplacePosterior {
  /** Maximum-likelihood estimate: the median. */
  readonly mle: number;
  private readonly nu: number;
  private readonly scale: number;
  /** Samples, sorted, centred on the MLE and scaled. */
  private readonly y: readonly number[];
  /** knots[k]: unnormalized CDF up to y[k] (k < n); knots[n]: the total. */
  private readonly knots: readonly number[];

  constructor(samples: readonly number[], nu?: number) {
    if (samples.length === 0) throw new RangeError('LaplacePosterior: empty input');
    this.nu = nu ?? samples.length - 1;
    const sorted = [...samples].sort((a, b) => a - b);
    this.mle = sortedQuantile(sorted, 0.5);
    let spread = 0;
    for (const v of sorted) spread += Math.abs(v - this.mle);
    this.scale = spread * this.nu ** (1 / (this.nu + 1));
    this.y = this.scale !== 0 ? sorted.map((v) => (v - this.mle) / this.scale) : sorted.map(() => 0);
    this.knots = this.scale !== 0 ? this.integrateKnots() : [];
  }

  /** Σ y[k:] − Σ y[:k], summed left to right as asv does. */
  private offset(k: number): number {
    let hi = 0;
    for (let j = k; j < this.y.length; j++) hi += this.y[j]!;
    let lo = 0;
    for (let j = 0; j < k; j++) lo += this.y[j]!;
    return hi - lo;
  }

  private integrateKnots(): number[] {
    const n = this.y.length;
    const nu = this.nu;
    const knots: number[] = [];
    let cdf = 0;
    for (let k = 0; k <= n; k++) {
      const c = 2 * k - n;
      const y = this.offset(k);
      const a = k === 0 ? Number.NEGATIVE_INFINITY : this.y[k - 1]!;
      const b = k === n ? Number.POSITIVE_INFINITY : this.y[k]!;
      const term = c === 0 ? (b - a) / y ** (nu + 1) : (1 / (nu * c)) * ((a * c + y) ** -nu - (b * c + y) ** -nu);
      cdf += Math.max(0, term); // avoid rounding error
      knots.push(cdf);
    }
    return knots;
  }

  /** Inverse of the unnormalized CDF. */
  private ppfUnnormalized(cdfx: number): number {
    const n = this.y.length;
    const nu = this.nu;
    let k = 0;
    while (k < n && !(cdfx <= this.knots[k]!)) k++;
    const c = 2 * k - n;
    const y = this.offset(k);
    let beta: number;
    if (k === 0) {
      const z = -nu * c * cdfx;
      beta = z > 0 ? (z ** (-1 / nu) - y) / c : Number.NEGATIVE_INFINITY;
    } else {
      const a = this.y[k - 1]!;
      const term = cdfx - this.knots[k - 1]!;
      if (c === 0) {
        beta = a + term * y ** (nu + 1);
      } else {
        const z = (a * c + y) ** -nu - nu * c * term;
        beta = z > 0 ? (z ** (-1 / nu) - y) / c : Number.POSITIVE_INFINITY;
      }
    }
    if (k < n) beta = Math.min(beta, this.y[k]!);
    return beta;
  }

  /** The quantile function: the β with posterior CDF equal to `p` (NaN outside [0, 1]). */
  ppf(p: number): number {
    if (p < 0 || p > 1) return Number.NaN;
    if (this.scale === 0) return this.mle;
    const norm = this.knots[this.knots.length - 1]!;
    const cdfx = Math.min(p * norm, norm);
    return this.ppfUnnormalized(cdfx) * this.scale + this.mle;
  }
}

/** Linear-interpolation quantile of already sorted values (asv_runner's `quantile`). */
export function sortedQuantile(sorted: readonly number[], q: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`invalid quantile ${q}`);
  const n = sorted.length;
  let z = (n - 1) * q;
  const j = Math.floor(z);
  z -= j;
  if (j === n - 1) return sorted[n - 1]!;
  return (1 - z) * sorted[j]! + z * sorted[j + 1]!;
}
