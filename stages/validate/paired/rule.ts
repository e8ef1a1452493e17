import { holmRejections } from './holm.js';
import { medianStandardError, moderatedVariance, noisePrior, pooledVariance } from './noise.js';
import type { PairedOptions } from './options.js';
import { median, present } from './stats.js';
import { studentTUpper, studentTUpperQuantile } from './student-t.js';

/**
 * The per-workload rule of perfmine's keep verdict, applied to all of a candidate's workloads at
 * once (the false-positive rate is controlled over them together). For workload w with n usable
 * pair log ratios d (log(expert/base), normalized where the engine needs it):
 *
 * - effect δ = median(d); noise s̃ = its pairs' spread around their medians (its base/expert pairs
 *   and its base/base pairs), moderated toward the other workloads' (noise.ts);
 * - t = max(0, |δ| − b) / se, se = √(π/2)·s̃/√n, with b the bias allowance (how far two processes
 *   of identical code sit apart beyond noise on this machine, calibration.ts); two-sided p-value
 *   from Student's t with the moderated degrees of freedom;
 * - significant: rejected by Holm's procedure at `alpha` over every workload tested, so the
 *   chance that any untouched workload of the candidate is called changed stays at most alpha;
 * - improved (worsened): significant, |δ| > log(thresholdFloor), and at least
 *   ⌈consistency·n⌉ pairs faster (slower);
 * - too few pairs: n < minPairs, or no noise estimate at all.
 *
 * The minimum detectable speedup (MDS) of a workload is exp(max(log floor, b + t*·se)), t* the
 * Bonferroni critical value (alpha / 2m): a speedup at least this large, measured with this noise,
 * is called improved (Holm rejects at least what Bonferroni does). Pure.
 */

export type RuleChange = 'improved' | 'worsened' | 'unchanged' | 'too-few-pairs';
export type UnchangedReason = 'not-significant' | 'below-floor' | 'directions-disagree';

export interface WorkloadEvidence {
  /** The pair log ratios under test, null where a pair is unusable. */
  readonly logs: readonly (number | null)[];
  /** Log ratios of pairs of identical code measured the same way: they inform the noise only. */
  readonly nullLogs: readonly (number | null)[];
  /** b, in log space (≥ 0). */
  readonly biasLog: number;
}

export interface RuleResult {
  readonly change: RuleChange;
  readonly reason: UnchangedReason | null;
  /** Usable pairs under test. */
  readonly pairs: number;
  readonly fasterPairs: number;
  readonly slowerPairs: number;
  /** δ: the median log ratio; null with no usable pair. */
  readonly medianLog: number | null;
  /** s̃: the moderated noise of one pair's log ratio; null when unknown. */
  readonly noiseLog: number | null;
  readonly df: number;
  readonly standardError: number | null;
  readonly t: number | null;
  /** Two-sided p-value before the multiple-comparison step; null when not tested. */
  readonly pValue: number | null;
  /** Rejected by Holm's procedure. */
  readonly significant: boolean;
  /** log of the minimum detectable speedup; null when not tested. */
  readonly mdsLog: number | null;
}

export type RuleOptions = Pick<PairedOptions, 'minPairs' | 'consistency' | 'alpha' | 'thresholdFloor' | 'maxPriorDf'>;

interface Tested {
  readonly usable: number[];
  readonly medianLog: number | null;
  readonly variance: number | null;
  readonly df: number;
}

export function applyRule(evidence: readonly WorkloadEvidence[], options: RuleOptions): RuleResult[] {
  const floorLog = Math.log(options.thresholdFloor);
  const raw = evidence.map((e) => {
    const usable = e.logs.filter(present);
    return { usable, own: pooledVariance([usable, e.nullLogs.filter(present)]) };
  });
  const prior = noisePrior(
    raw.map((r) => r.own),
    options.maxPriorDf,
  );
  const tested: Tested[] = raw.map((r) => {
    const v = moderatedVariance(r.own, prior);
    return { usable: r.usable, medianLog: median(r.usable), variance: v.variance, df: v.df };
  });
  const testable = tested.map((t) => t.usable.length >= options.minPairs && t.variance !== null && t.df > 0);
  const m = testable.filter(Boolean).length;

  const stats = tested.map((t, i) => {
    if (!testable[i]) return { se: null, t: null, p: null, mdsLog: null };
    const b = evidence[i]!.biasLog;
    const se = medianStandardError(t.variance!, t.usable.length);
    if (se === 0) {
      // identical ratios in every pair: any effect beyond the allowance is certain
      const beyond = Math.abs(t.medianLog!) > b;
      return { se, t: beyond ? Infinity : 0, p: beyond ? 0 : 1, mdsLog: Math.max(floorLog, b) };
    }
    const tStat = Math.max(0, Math.abs(t.medianLog!) - b) / se;
    const critical = studentTUpperQuantile(options.alpha / (2 * m), t.df);
    return { se, t: tStat, p: Math.min(1, 2 * studentTUpper(tStat, t.df)), mdsLog: Math.max(floorLog, b + critical * se) };
  });
  const significant = holmRejections(
    stats.map((s) => s.p),
    options.alpha,
  );

  return tested.map((t, i): RuleResult => {
    const s = stats[i]!;
    const fasterPairs = t.usable.filter((l) => l < 0).length;
    const slowerPairs = t.usable.filter((l) => l > 0).length;
    const base = {
      pairs: t.usable.length,
      fasterPairs,
      slowerPairs,
      medianLog: t.medianLog,
      noiseLog: t.variance === null ? null : Math.sqrt(t.variance),
      df: t.df,
      standardError: s.se,
      t: s.t,
      pValue: s.p,
      significant: significant[i]!,
      mdsLog: s.mdsLog,
    };
    if (!testable[i]) return { change: 'too-few-pairs', reason: null, ...base };
    const needed = Math.ceil(options.consistency * t.usable.length);
    const improving = t.medianLog! < 0;
    if (!significant[i]) return { change: 'unchanged', reason: 'not-significant', ...base };
    if (Math.abs(t.medianLog!) <= floorLog) return { change: 'unchanged', reason: 'below-floor', ...base };
    if ((improving ? fasterPairs : slowerPairs) < needed) return { change: 'unchanged', reason: 'directions-disagree', ...base };
    return { change: improving ? 'improved' : 'worsened', reason: null, ...base };
  });
}
