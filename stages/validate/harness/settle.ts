import { settleAtLook, tableEvidence, type PairedOptions, type SequentialOptions, type Settlement } from '../paired/index.js';
import type { InterleavedMeasurement } from './interleave.js';
import { harnessCalibrationTable, harnessPairTable } from './tables.js';

/**
 * The adaptive sampling's look: the workloads of an interleaved measurement so far that are
 * settled (measured no further), by the paired rule at the look's share of alpha. Validate's and
 * a replay's measurements both ask it after each look. Pure.
 */
export function settledAtLook(
  snapshot: InterleavedMeasurement,
  paired: PairedOptions,
  adaptive: SequentialOptions,
): Map<string, Settlement> {
  const table = harnessPairTable(snapshot);
  const { evidence } = tableEvidence(table, harnessCalibrationTable(snapshot), paired);
  const settled = settleAtLook(
    evidence,
    evidence.map(() => true),
    paired,
    adaptive,
  );
  const out = new Map<string, Settlement>();
  settled.forEach((s, i) => s && out.set(table.names[i]!, s));
  return out;
}
