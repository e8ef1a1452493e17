import type { ResultSet } from '../../../pipeline/concepts/asv/result-set.js';
import { calibrate, uncalibrated, type Calibration } from './calibration.js';
import { DEFAULT_PAIRED_OPTIONS, type PairedOptions } from './options.js';
import { pairTable, workloadLogs, type PairTable } from './pairs.js';
import { applyRule, type UnchangedReason, type WorkloadEvidence } from './rule.js';
import { median, present } from './stats.js';

/**
 * perfmine's keep verdict per workload, for both engines. The unit of evidence is a base/expert
 * pair adjacent in time: a sample batch of each side with perfmine's interleaved harness, an
 * invocation of each side with asv (normalized by the pair's machine-speed factor, pairs.ts).
 * Each workload is held to its own noise (its pairs and its base/base calibration pairs, pooled
 * with the other workloads only as far as it has little evidence), a consistency rule across
 * pairs, the false-positive rate over all workloads controlled (Holm), and never less than the
 * threshold floor (rule.ts); calibration gives the bias allowance and the measured
 * false-positive rate (calibration.ts). Pure.
 */

export type PairedChange = 'improved' | 'worsened' | 'unchanged' | 'incomparable';

/** Why a workload is incomparable or unchanged. */
export type PairedReason = 'benchmark-changed' | 'failed-on-base' | 'failed-on-expert' | 'too-few-pairs' | UnchangedReason;

export interface PairedWorkloadVerdict {
  readonly name: string;
  readonly change: PairedChange;
  /** Null for improved / worsened. */
  readonly reason: PairedReason | null;
  /** Per pair: expert median / base median (raw), null where unusable. */
  readonly pairRatios: readonly (number | null)[];
  /** Per pair: the raw ratio divided by the pair's machine factor (the raw ratio where not normalized). */
  readonly normalizedRatios: readonly (number | null)[];
  readonly usablePairs: number;
  readonly fasterPairs: number;
  readonly slowerPairs: number;
  /** exp(median over pairs of the normalized log ratios): expert/base, the effect the rule judges. */
  readonly normalizedMedian: number | null;
  /** Median over the pairs of the base (expert) medians. */
  readonly baseMedian: number | null;
  readonly expertMedian: number | null;
  /** The workload's moderated noise: the standard deviation of one pair's log ratio. */
  readonly noise: number | null;
  /** Two-sided p-value of its test (before Holm's step); null when not tested. */
  readonly pValue: number | null;
  /** Rejected by Holm's procedure over the candidate's workloads. */
  readonly significant: boolean;
  /** The minimum detectable speedup: a speedup at least this large, with this noise, is called improved. */
  readonly mds: number | null;
}

export interface PairedReport {
  readonly pairs: number;
  readonly unpaired: number;
  /** Each base/expert pair's machine-speed factor (1 where not normalized). */
  readonly machineFactors: readonly number[];
  readonly normalized: readonly boolean[];
  readonly calibration: Calibration;
  /** The smallest effect any workload can be called changed by: exp(max(log floor, bias allowance)). */
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

/** The verdict on asv invocations (the asv engine, `perfmine compare` on directories). */
export function pairedVerdict(input: PairedInput, options: PairedOptions = DEFAULT_PAIRED_OPTIONS): PairedReport {
  const ab = pairTable(input.base, input.expert, options.minNormalizationWorkloads);
  const cal = input.calibration ? pairTable(input.calibration.first, input.calibration.second, options.minNormalizationWorkloads) : null;
  return verdictOfTables(ab, cal, options);
}

/** What the rule weighs for each workload of a table: its pairs, its base/base pairs, the bias allowance. */
export function tableEvidence(
  table: PairTable,
  calibrationTable: PairTable | null,
  options: PairedOptions,
): { evidence: WorkloadEvidence[]; calibration: Calibration } {
  const calibration = calibrationTable ? calibrate(calibrationTable, options) : uncalibrated();
  const calIndex = new Map(calibrationTable?.names.map((n, i) => [n, i]) ?? []);
  const evidence = table.names.map((name, i) => {
    const c = calIndex.get(name);
    return {
      logs: workloadLogs(table, i),
      nullLogs: calibration.calibrated && c !== undefined ? workloadLogs(calibrationTable!, c) : [],
      biasLog: calibration.biasLog,
    };
  });
  return { evidence, calibration };
}

/** The verdict on pair tables, however their pairs were measured (invocations, or the harness's rounds). */
export function verdictOfTables(
  table: PairTable,
  calibrationTable: PairTable | null,
  options: PairedOptions = DEFAULT_PAIRED_OPTIONS,
): PairedReport {
  const { evidence, calibration } = tableEvidence(table, calibrationTable, options);
  const results = applyRule(evidence, options);

  const workloads = table.names.map((name, i): PairedWorkloadVerdict => {
    const rule = results[i]!;
    const logs = workloadLogs(table, i);
    const change: PairedChange = rule.change === 'too-few-pairs' ? 'incomparable' : rule.change;
    return {
      name,
      change,
      reason: rule.change === 'too-few-pairs' ? incomparableReason(table, i) : rule.reason,
      pairRatios: table.pairs.map((p) => (p.logRatios[i] === null ? null : Math.exp(p.logRatios[i]!))),
      normalizedRatios: logs.map((l) => (l === null ? null : Math.exp(l))),
      usablePairs: rule.pairs,
      fasterPairs: rule.fasterPairs,
      slowerPairs: rule.slowerPairs,
      normalizedMedian: rule.medianLog === null ? null : Math.exp(rule.medianLog),
      baseMedian: median(table.pairs.map((p) => p.firstValues[i] ?? null).filter(present)),
      expertMedian: median(table.pairs.map((p) => p.secondValues[i] ?? null).filter(present)),
      noise: rule.noiseLog,
      pValue: rule.pValue,
      significant: rule.significant,
      mds: rule.mdsLog === null ? null : Math.exp(rule.mdsLog),
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
    threshold: Math.exp(Math.max(Math.log(options.thresholdFloor), calibration.biasLog)),
    options,
    workloads,
    counts,
  };
}
