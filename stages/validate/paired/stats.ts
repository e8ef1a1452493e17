import { quantile } from '../../../pipeline/concepts/asv/compute-stats.js';

/** Small order statistics in log space for the paired verdict. Pure. */

/** The median (mean of the two middle values for an even count); null for no values. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * The shorth median: the median of the densest half of the values, i.e. of the ⌊n/2⌋+1
 * consecutive sorted values that span the shortest range (the first such window on ties). Like the
 * median it ignores up to half of the values however far they go, but unlike it, it is not
 * dragged toward a large minority that moved together: the values that did not move are the
 * densest half. Null for no values.
 */
export function shorthMedian(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const h = (s.length >> 1) + 1;
  let best = 0;
  for (let i = 1; i + h <= s.length; i++) if (s[i + h - 1]! - s[i]! < s[best + h - 1]! - s[best]!) best = i;
  return median(s.slice(best, best + h));
}

/** The linear-interpolation quantile (numpy's default, asv_runner's `quantile`); null for no values. */
export function quantileOf(values: readonly number[], q: number): number | null {
  return values.length === 0 ? null : quantile(values, q);
}

/** log(x) for a usable timing (positive and finite), else null. */
export function logOf(x: number | null | undefined): number | null {
  return typeof x === 'number' && Number.isFinite(x) && x > 0 ? Math.log(x) : null;
}

export function present<T>(x: T | null | undefined): x is T {
  return x !== null && x !== undefined;
}
