import type { PairedOptions } from './options.js';
import { workloadLogs, type PairTable } from './pairs.js';
import { applyRule } from './rule.js';
import { present, quantileOf } from './stats.js';

/**
 * Calibration from base/base pairs measured the same way on the same machine (two invocations of
 * the base, interleaved like the A/B pairs and normalized by their own machine factors).
 *
 * Spread S: the `spreadQuantile` quantile (default 0.95, linear interpolation) of
 * |normalized log ratio| over every calibration pair and workload: how far one pair of
 * identical code lands from 1 on this machine, after normalization.
 *
 * Threshold: log T = max(log thresholdFloor, safetyFactor × S). The rule compares the *median*
 * over pairs to it, while S is the spread of *single* pairs, so the threshold is conservative on
 * purpose; the safety factor (default 1.5) covers the quantile's own uncertainty with few pairs.
 *
 * False-positive rate (out of sample, leave one workload out): for each workload, the threshold is
 * recomputed from the calibration values of all *other* workloads and the rule is applied to that
 * workload's own base/base pairs as if they were base/expert; the rate is flagged (improved or
 * worsened) / compared. Applying the threshold to the very values it was computed from would
 * understate the rate. Pure.
 */

export interface FalsePositive {
  readonly name: string;
  readonly change: 'improved' | 'worsened';
  readonly normalizedMedian: number;
}

export interface FalsePositiveRate {
  /** Workloads with at least minPairs usable calibration pairs. */
  readonly compared: number;
  readonly flagged: number;
  /** flagged / compared; null when nothing could be compared. */
  readonly rate: number | null;
  readonly workloads: readonly FalsePositive[];
}

export interface Calibration {
  readonly pairs: number;
  readonly unpaired: number;
  /** Each calibration pair's machine-speed factor (1 where not normalized). */
  readonly machineFactors: readonly number[];
  /** |normalized log ratio| values the spread is the quantile of. */
  readonly values: number;
  /** The spread S in log space; null with no values. */
  readonly spreadLog: number | null;
  /** The threshold factor T (≥ thresholdFloor). */
  readonly threshold: number;
  /** False when there were fewer than minCalibrationPairs pairs or no values: T is then the floor. */
  readonly calibrated: boolean;
  readonly falsePositives: FalsePositiveRate;
}

type ThresholdOptions = Pick<PairedOptions, 'thresholdFloor' | 'safetyFactor' | 'spreadQuantile'>;

/** log T from a spread: max(log floor, safety × spread). */
export function logThresholdOf(spreadLog: number | null, options: ThresholdOptions): number {
  const floor = Math.log(options.thresholdFloor);
  return spreadLog === null ? floor : Math.max(floor, options.safetyFactor * spreadLog);
}

/** |normalized log ratio| of every usable (pair, workload), per workload. */
function absoluteLogs(table: PairTable): number[][] {
  return table.names.map((_, i) => workloadLogs(table, i).filter(present).map(Math.abs));
}

export function calibrate(table: PairTable, options: PairedOptions): Calibration {
  const perWorkload = absoluteLogs(table);
  const all = perWorkload.flat();
  const spreadLog = quantileOf(all, options.spreadQuantile);
  const calibrated = table.pairs.length >= options.minCalibrationPairs && all.length > 0;
  const logThreshold = logThresholdOf(calibrated ? spreadLog : null, options);

  const flaggedList: FalsePositive[] = [];
  let compared = 0;
  table.names.forEach((name, i) => {
    const others = perWorkload.flatMap((v, j) => (j === i ? [] : v));
    if (others.length === 0) return;
    const result = applyRule(workloadLogs(table, i), logThresholdOf(quantileOf(others, options.spreadQuantile), options), options);
    if (result.change === 'too-few-pairs') return;
    compared += 1;
    if (result.change === 'improved' || result.change === 'worsened') {
      flaggedList.push({ name, change: result.change, normalizedMedian: Math.exp(result.medianLog!) });
    }
  });

  return {
    pairs: table.pairs.length,
    unpaired: table.unpaired,
    machineFactors: table.pairs.map((p) => Math.exp(p.logFactor)),
    values: all.length,
    spreadLog: calibrated ? spreadLog : null,
    threshold: Math.exp(logThreshold),
    calibrated,
    falsePositives: {
      compared: calibrated ? compared : 0,
      flagged: calibrated ? flaggedList.length : 0,
      rate: calibrated && compared > 0 ? flaggedList.length / compared : null,
      workloads: calibrated ? flaggedList : [],
    },
  };
}

/** The threshold when there is no calibration at all: the floor. */
export function uncalibrated(options: PairedOptions): Calibration {
  return {
    pairs: 0,
    unpaired: 0,
    machineFactors: [],
    values: 0,
    spreadLog: null,
    threshold: options.thresholdFloor,
    calibrated: false,
    falsePositives: { compared: 0, flagged: 0, rate: null, workloads: [] },
  };
}
