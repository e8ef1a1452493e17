/**
 * The run summary's line about the measurement protocol: how often the paired verdict flags a
 * workload on base/base calibration pairs (out of sample), pooled over the candidates validated
 * in the run. Pure; reads the run's metrics.
 */
export function calibrationSummaryLine(metrics: Readonly<Record<string, number>>): string | null {
  const compared = metrics['validate.calibrationCompared'] ?? 0;
  if (compared === 0) return null;
  const flagged = metrics['validate.calibrationFlagged'] ?? 0;
  return `validate: paired-verdict false positives on base/base calibration: ${flagged} of ${compared} workloads (${((100 * flagged) / compared).toFixed(1)}%)`;
}
