import type { PairedOptions } from './options.js';
import { workloadLogs, type PairTable } from './pairs.js';
import { applyRule, type WorkloadEvidence } from './rule.js';
import { present, quantileOf } from './stats.js';

/**
 * Calibration from base/base pairs measured exactly like the base/expert pairs (two processes or
 * invocations of the base on the same machine, interleaved with the others).
 *
 * Its noise enters every workload's noise estimate (rule.ts). Beyond that it gives two numbers:
 *
 * - the bias allowance b: for each workload, how far its base/base median sits from 1 beyond
 *   twice its own standard error, e_w = max(0, |median c_w| − 2·se_w); b = safetyFactor × the
 *   90th percentile of e over the workloads (the largest one with fewer than five). Two warm
 *   processes of identical code can differ consistently (memory layout, hash seeds); that part
 *   does not average out over pairs, so it is added to every threshold. Pure noise gives b ≈ 0.
 * - the false-positive rate, out of sample: the whole rule (rule.ts, with Holm over the
 *   workloads) applied to the base/base pairs as if they were base/expert, each workload held to
 *   an allowance computed without it; flagged (improved or worsened) / compared. Pure.
 */

export interface FalsePositive {
  readonly name: string;
  readonly change: 'improved' | 'worsened';
  readonly normalizedMedian: number;
}

export interface FalsePositiveRate {
  /** Workloads with enough usable calibration pairs to be tested. */
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
  /** Usable base/base log ratios over all workloads. */
  readonly values: number;
  /** The bias allowance b in log space (0 when uncalibrated). */
  readonly biasLog: number;
  /** False when there were fewer than minCalibrationPairs pairs or no values. */
  readonly calibrated: boolean;
  readonly falsePositives: FalsePositiveRate;
}

/** e_w per workload: |median| beyond twice its standard error (null when untestable). */
function excessOf(table: PairTable, options: PairedOptions): (number | null)[] {
  const evidence: WorkloadEvidence[] = table.names.map((_, i) => ({ logs: workloadLogs(table, i), nullLogs: [], biasLog: 0 }));
  return applyRule(evidence, { ...options, minPairs: options.minCalibrationPairs }).map((r) =>
    r.medianLog === null || r.standardError === null ? null : Math.max(0, Math.abs(r.medianLog) - 2 * r.standardError),
  );
}

/** b from the excesses of the workloads (leaving out `except`). */
function allowanceOf(excess: readonly (number | null)[], options: PairedOptions, except = -1): number {
  const values = excess.filter((e, i): e is number => i !== except && present(e));
  if (values.length === 0) return 0;
  const spread = values.length >= 5 ? quantileOf(values, 0.9)! : Math.max(...values);
  return options.safetyFactor * spread;
}

export function calibrate(table: PairTable, options: PairedOptions): Calibration {
  const values = table.names.reduce((n, _, i) => n + workloadLogs(table, i).filter(present).length, 0);
  const calibrated = table.pairs.length >= options.minCalibrationPairs && values > 0;
  const common = {
    pairs: table.pairs.length,
    unpaired: table.unpaired,
    machineFactors: table.pairs.map((p) => Math.exp(p.logFactor)),
    values,
  };
  if (!calibrated) return { ...common, biasLog: 0, calibrated, falsePositives: { compared: 0, flagged: 0, rate: null, workloads: [] } };

  const excess = excessOf(table, options);
  const evidence: WorkloadEvidence[] = table.names.map((_, i) => ({
    logs: workloadLogs(table, i),
    nullLogs: [],
    biasLog: allowanceOf(excess, options, i),
  }));
  const results = applyRule(evidence, { ...options, minPairs: options.minCalibrationPairs });
  const flagged: FalsePositive[] = [];
  let compared = 0;
  results.forEach((r, i) => {
    if (r.change === 'too-few-pairs') return;
    compared += 1;
    if (r.change === 'improved' || r.change === 'worsened')
      flagged.push({ name: table.names[i]!, change: r.change, normalizedMedian: Math.exp(r.medianLog!) });
  });
  return {
    ...common,
    biasLog: allowanceOf(excess, options),
    calibrated,
    falsePositives: { compared, flagged: flagged.length, rate: compared > 0 ? flagged.length / compared : null, workloads: flagged },
  };
}

/** No calibration at all: no allowance, no rate. */
export function uncalibrated(): Calibration {
  return {
    pairs: 0,
    unpaired: 0,
    machineFactors: [],
    values: 0,
    biasLog: 0,
    calibrated: false,
    falsePositives: { compared: 0, flagged: 0, rate: null, workloads: [] },
  };
}
