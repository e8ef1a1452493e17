/**
 * perfmine's paired verdict: invocation pairs, machine-speed normalization, calibration by
 * base/base pairs, and the per-workload rule. See verdict.ts for the whole rule.
 */
export { pairedOptionsSchema, DEFAULT_PAIRED_OPTIONS, type PairedOptions } from './options.js';
export { pairTable, invocationValues, workloadLogs, type PairTable, type PairColumn, type InvocationValue } from './pairs.js';
export { applyRule, type RuleResult, type RuleChange, type RuleOptions } from './rule.js';
export { calibrate, uncalibrated, logThresholdOf, type Calibration, type FalsePositiveRate, type FalsePositive } from './calibration.js';
export {
  pairedVerdict,
  type PairedInput,
  type PairedReport,
  type PairedWorkloadVerdict,
  type PairedChange,
  type PairedReason,
} from './verdict.js';
export { median } from './stats.js';
