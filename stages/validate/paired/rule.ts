import type { PairedOptions } from './options.js';
import { median, present } from './stats.js';

/**
 * The per-workload rule of the paired verdict, on one workload's normalized log ratios
 * (log(expert/base) − log machine factor, one per pair). With n usable pairs and k =
 * allowedDisagreeing:
 *
 * - improved:  n ≥ minPairs, at least n − k pairs below 0, and median < −log T
 * - worsened:  n ≥ minPairs, at least n − k pairs above 0, and median > +log T
 * - unchanged: otherwise (directions disagree, or the median is within the threshold)
 * - too few pairs: n < minPairs
 *
 * T is the threshold factor (calibrated, see calibration.ts). A pair exactly at 0 counts as
 * disagreeing. The median of an even count is the mean of the two middle values. Pure.
 */

export type RuleChange = 'improved' | 'worsened' | 'unchanged' | 'too-few-pairs';

export interface RuleResult {
  readonly change: RuleChange;
  /** Usable pairs. */
  readonly pairs: number;
  readonly fasterPairs: number;
  readonly slowerPairs: number;
  /** Median normalized log ratio over the usable pairs; null with none. */
  readonly medianLog: number | null;
}

export type RuleOptions = Pick<PairedOptions, 'minPairs' | 'allowedDisagreeing'>;

export function applyRule(logs: readonly (number | null)[], logThreshold: number, options: RuleOptions): RuleResult {
  const usable = logs.filter(present);
  const fasterPairs = usable.filter((l) => l < 0).length;
  const slowerPairs = usable.filter((l) => l > 0).length;
  const medianLog = median(usable);
  const base = { pairs: usable.length, fasterPairs, slowerPairs, medianLog };
  if (usable.length < options.minPairs || medianLog === null) return { change: 'too-few-pairs', ...base };
  const needed = usable.length - options.allowedDisagreeing;
  if (fasterPairs >= needed && medianLog < -logThreshold) return { change: 'improved', ...base };
  if (slowerPairs >= needed && medianLog > logThreshold) return { change: 'worsened', ...base };
  return { change: 'unchanged', ...base };
}
