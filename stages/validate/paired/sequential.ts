import type { PairedOptions } from './options.js';
import { applyRule, type WorkloadEvidence } from './rule.js';
import { studentTUpperQuantile } from './student-t.js';

/**
 * Adaptive sampling: which workloads are settled at an interim look, so that they are measured no
 * further. A group-sequential design over the candidate's workloads:
 *
 * - at each of the L interim looks the whole rule (rule.ts, Holm over the workloads) is applied at
 *   alpha x earlyAlphaShare / L, and a workload it calls improved or worsened is settled as
 *   changed; the final analysis, when the measurement ends, applies the rule at
 *   alpha x (1 − earlyAlphaShare) to all the data. Any untouched workload would have to be flagged
 *   at one of these L + 1 analyses, each controlled by Holm at its share of alpha, so the chance
 *   that any untouched workload of the candidate is flagged stays at most alpha (union bound);
 * - a workload is settled as unchanged (futility) when its effect's two-sided 1 − 2γ interval,
 *   γ = futility, lies inside ±max(log floor, bias allowance): even its far end could not be
 *   called a change. Stopping a workload this way never adds a false flag; a workload whose true effect is
 *   beyond the floor is stopped this way with a chance of at most γ per look (L x γ in all).
 *
 * Pure.
 */

export interface SequentialOptions {
  /** Rounds after which an interim look is made, ascending, each below the last round. */
  readonly looks: readonly number[];
  /** The share of alpha spent over the interim looks (the final analysis keeps the rest). */
  readonly earlyAlphaShare: number;
  /** γ: the per-look chance of stopping, as unchanged, a workload whose effect is beyond the floor. */
  readonly futility: number;
}

export type Settlement = 'changed' | 'unchanged';

/** The alpha of the final analysis when interim looks were made. */
export function finalAlpha(alpha: number, seq: SequentialOptions): number {
  return seq.looks.length === 0 ? alpha : alpha * (1 - seq.earlyAlphaShare);
}

/** The alpha of each interim look. */
export function lookAlpha(alpha: number, seq: SequentialOptions): number {
  return seq.looks.length === 0 ? 0 : (alpha * seq.earlyAlphaShare) / seq.looks.length;
}

/**
 * At an interim look: for each workload (the evidence of all of them, settled ones included, so
 * that Holm counts every workload), whether it is settled now. `active` marks the workloads still
 * measured; others get null.
 */
export function settleAtLook(
  evidence: readonly WorkloadEvidence[],
  active: readonly boolean[],
  options: PairedOptions,
  seq: SequentialOptions,
): (Settlement | null)[] {
  const results = applyRule(evidence, { ...options, alpha: lookAlpha(options.alpha, seq) });
  const floorLog = Math.log(options.thresholdFloor);
  return results.map((r, i) => {
    if (!active[i]) return null;
    if (r.change === 'improved' || r.change === 'worsened') return 'changed';
    if (r.change === 'too-few-pairs' || r.medianLog === null || r.standardError === null) return null;
    // beyond neither the floor nor the bias allowance, it could never be called a change
    const reach = Math.abs(r.medianLog) + studentTUpperQuantile(seq.futility, r.df) * r.standardError;
    return reach < Math.max(floorLog, evidence[i]!.biasLog) ? 'unchanged' : null;
  });
}
