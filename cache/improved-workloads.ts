import type { Db } from './store.js';

/**
 * The workloads validate found improved for a candidate: what a rules-only problem statement
 * shows. The one place that reads them (from `workload_verdicts`, migration 0006), so that a
 * change in how validate stores its verdicts is adapted here.
 */
export interface ImprovedWorkload {
  /** asv's workload name: `module.Class.function(params)`. */
  readonly name: string;
  /** The parameter part of the name without parentheses, or null when unparameterized. */
  readonly params: string | null;
  /** asv's unit of the measured value (`seconds`, `bytes`, or a track benchmark's own), when known. */
  readonly unit: string | null;
  /** The median at the base commit (pooled samples). */
  readonly baseMedian: number | null;
  /** base / expert of the medians (FormulaCode's speedup). */
  readonly speedup: number | null;
}

/** The candidate's improved workloads (perfmine's paired verdict), by name in byte order. */
export function improvedWorkloads(db: Db, key: string): ImprovedWorkload[] {
  return db
    .prepare<
      [string],
      { workload: string; params: string | null; unit: string | null; base_median: number | null; speedup: number | null }
    >(
      `SELECT workload, params, unit, base_median, speedup FROM workload_verdicts
        WHERE key = ? AND paired_change = 'improved' ORDER BY workload`,
    )
    .all(key)
    .map((r) => ({ name: r.workload, params: r.params, unit: r.unit, baseMedian: r.base_median, speedup: r.speedup }));
}
