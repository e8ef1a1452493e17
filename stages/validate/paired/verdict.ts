import type { ResultSet } from '../asv/result-set.js';
import { calibrate, uncalibrated, type Calibration } from './calibration.js';
import { DEFAULT_PAIRED_OPTIONS, type PairedOptions } from './options.js';
import { pairTable, workloadLogs, type PairTable } from './pairs.js';
import { applyRule } from './rule.js';
import { median, present } from './stats.js';

/**
 * perfmine's keep verdict per workload, made for noisy shared machines where samples cluster by
 * invocation: the unit of evidence is an adjacent base/expert invocation pair, each pair's ratio
 * is normalized by the pair's machine-speed factor (pairs.ts), and a workload is improved only
 * when the normalized ratio is below 1 in every pair (or all but `allowedDisagreeing`) and its
 * median over pairs is below 1/T, T calibrated by base/base pairs (calibration.ts). Pure.
 */

export type PairedChange = 'improved' | 'worsened' | 'unchanged' | 'incomparable';

/** Why a workload is incomparable or unchanged. */
export type PairedReason =
  | 'benchmark-changed'
  | 'failed-on-base'
  | 'failed-on-expert'
  | 'too-few-pairs'
  | 'directions-disagree'
  | 'within-threshold';

export interface PairedWorkloadVerdict {
  readonly name: string;
  readonly change: PairedChange;
  /** Null for improved / worsened. */
  readonly reason: PairedReason | null;
  /** Per pair: expert median / base median (raw), null where unusable. */
  readonly pairRatios: readonly (number | null)[];
  /** Per pair: the raw ratio divided by the pair's machine factor. */
  readonly normalizedRatios: readonly (number | null)[];
  readonly usablePairs: number;
  readonly fasterPairs: number;
  readonly slowerPairs: number;
  /** exp(median over pairs of the normalized log ratios); the number compared with 1/T and T. */
  readonly normalizedMedian: number | null;
  /** Median over the pairs of the base (expert) invocation medians. */
  readonly baseMedian: number | null;
  readonly expertMedian: number | null;
}

export interface PairedReport {
  readonly pairs: number;
  readonly unpaired: number;
  /** Each A/B pair's machine-speed factor (1 where not normalized). */
  readonly machineFactors: readonly number[];
  readonly normalized: readonly boolean[];
  readonly calibration: Calibration;
  /** The threshold factor T every workload was held to. */
  readonly threshold: number;
  readonly options: PairedOptions;
  readonly workloads: readonly PairedWorkloadVerdict[];
  readonly counts: Readonly<Record<PairedChange, number>>;
}

export interface PairedInput {
  /** Base invocations, in time order. */
  readonly base: readonly ResultSet[];
  /** Expert invocations, in time order; pair p = (base[p], expert[p]). */
  readonly expert: readonly ResultSet[];
  /** Base/base calibration invocations: pair p = (first[p], second[p]). */
  readonly calibration?: { readonly first: readonly ResultSet[]; readonly second: readonly ResultSet[] } | null;
}

function incomparableReason(table: PairTable, i: number): PairedReason {
  const pairs = table.pairs;
  if (pairs.some((p) => p.versionChanged[i])) return 'benchmark-changed';
  const baseOk = pairs.filter((p) => present(p.firstValues[i])).length;
  const expertOk = pairs.filter((p) => present(p.secondValues[i])).length;
  if (baseOk === 0 && pairs.length > 0) return 'failed-on-base';
  if (expertOk < baseOk) return 'failed-on-expert';
  return 'too-few-pairs';
}

export function pairedVerdict(input: PairedInput, options: PairedOptions = DEFAULT_PAIRED_OPTIONS): PairedReport {
  const table = pairTable(input.base, input.expert, options.minNormalizationWorkloads);
  const calibration = input.calibration
    ? calibrate(pairTable(input.calibration.first, input.calibration.second, options.minNormalizationWorkloads), options)
    : uncalibrated(options);
  const logThreshold = Math.log(calibration.threshold);

  const workloads = table.names.map((name, i): PairedWorkloadVerdict => {
    const logs = workloadLogs(table, i);
    const rule = applyRule(logs, logThreshold, options);
    const change: PairedChange = rule.change === 'too-few-pairs' ? 'incomparable' : rule.change;
    const reason: PairedReason | null =
      rule.change === 'too-few-pairs'
        ? incomparableReason(table, i)
        : rule.change === 'unchanged'
          ? rule.medianLog !== null && Math.abs(rule.medianLog) > logThreshold
            ? 'directions-disagree'
            : 'within-threshold'
          : null;
    return {
      name,
      change,
      reason,
      pairRatios: table.pairs.map((p) => (p.logRatios[i] === null ? null : Math.exp(p.logRatios[i]!))),
      normalizedRatios: logs.map((l) => (l === null ? null : Math.exp(l))),
      usablePairs: rule.pairs,
      fasterPairs: rule.fasterPairs,
      slowerPairs: rule.slowerPairs,
      normalizedMedian: rule.medianLog === null ? null : Math.exp(rule.medianLog),
      baseMedian: median(table.pairs.map((p) => p.firstValues[i] ?? null).filter(present)),
      expertMedian: median(table.pairs.map((p) => p.secondValues[i] ?? null).filter(present)),
    };
  });

  const counts: Record<PairedChange, number> = { improved: 0, worsened: 0, unchanged: 0, incomparable: 0 };
  for (const w of workloads) counts[w.change] += 1;
  return {
    pairs: table.pairs.length,
    unpaired: table.unpaired,
    machineFactors: table.pairs.map((p) => Math.exp(p.logFactor)),
    normalized: table.pairs.map((p) => p.normalized),
    calibration,
    threshold: calibration.threshold,
    options,
    workloads,
    counts,
  };
}
