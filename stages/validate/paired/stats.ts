import { quantile } from '../asv/compute-stats.js';

/** Small order statistics in log space for the paired verdict. Pure. */

/** The median (mean of the two middle values for an even count); null for no values. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
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
