/**
 * perfmine's keep verdict per workload: pairs (asv invocations normalized by machine factor, or
 * the harness's rounds), the per-workload rule with Holm's control of false positives, and the
 * base/base calibration. See verdict.ts for the whole rule.
 */
export { pairedOptionsSchema, DEFAULT_PAIRED_OPTIONS, type PairedOptions } from './options.js';
export { pairTable, invocationValues, workloadLogs, type PairTable, type PairColumn, type InvocationValue } from './pairs.js';
export { applyRule, type RuleResult, type RuleChange, type RuleOptions, type WorkloadEvidence, type UnchangedReason } from './rule.js';
export { calibrate, uncalibrated, type Calibration, type FalsePositiveRate, type FalsePositive } from './calibration.js';
export {
  pairedVerdict,
  verdictOfTables,
  tableEvidence,
  type PairedInput,
  type PairedReport,
  type PairedWorkloadVerdict,
  type PairedChange,
  type PairedReason,
} from './verdict.js';
export { median } from './stats.js';
export { settleAtLook, finalAlpha, lookAlpha, type SequentialOptions, type Settlement } from './sequential.js';
