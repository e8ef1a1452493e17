import { compareCodePoints, type ResultSet } from '../../../pipeline/concepts/asv/result-set.js';
import { logOf, present, shorthMedian } from './stats.js';

/**
 * Invocation pairs: the unit of evidence of perfmine's paired verdict. Pair p is the p-th
 * invocation of the first side with the p-th invocation of the second (each side in time order),
 * which for an A B B A … schedule are adjacent in time. Per pair and workload: the ratio of the
 * two invocation medians (second / first); per pair: the machine-speed factor, so that a
 * whole-machine slowdown during the pair cancels; and the normalized ratios (ratio / factor).
 * Everything in natural-log space. Pure.
 *
 * The machine factor is the shorth median of the pair's ratios over all workloads (the median of
 * their densest half, stats.ts), not their plain median: a patch that moves a large minority of
 * the workloads together drags the plain median toward them, which makes every untouched
 * workload look changed the other way (seen on this machine: two of six workloads 16-30x slower
 * put the plain-median factors at 1.05-1.07, and an untouched workload, raw 0.97, normalized to
 * 0.92, past the threshold). The untouched workloads are the densest half, so the shorth is not.
 */

/** One workload in one invocation: its median if usable (positive, finite), and its benchmark version. */
export interface InvocationValue {
  readonly value: number | null;
  readonly version: string | null;
}

/** The usable medians of one invocation by workload name (asv stores each invocation's median as the result). */
export function invocationValues(set: ResultSet): Map<string, InvocationValue> {
  const out = new Map<string, InvocationValue>();
  for (const w of set.workloads) {
    out.set(w.name, { value: logOf(w.value) === null ? null : w.value, version: w.version });
  }
  return out;
}

export interface PairColumn {
  readonly first: string;
  readonly second: string;
  /** Per workload (aligned with the table's names): the invocation medians, null where unusable or missing. */
  readonly firstValues: readonly (number | null)[];
  readonly secondValues: readonly (number | null)[];
  /** Per workload: the benchmark's version differs between the two invocations (asv's `x`). */
  readonly versionChanged: readonly boolean[];
  /** Per workload: log(second / first); null where either side is unusable or the version changed. */
  readonly logRatios: readonly (number | null)[];
  /** log of the machine-speed factor: the shorth median of the pair's log ratios; 0 when not normalized. */
  readonly logFactor: number;
  /** Whether the pair had enough workloads (minNormalizationWorkloads) to be normalized. */
  readonly normalized: boolean;
  /** How many workloads the factor is the median of. */
  readonly factorWorkloads: number;
  /** Per workload: logRatio − logFactor. */
  readonly normalizedLogs: readonly (number | null)[];
}

export interface PairTable {
  /** Every workload on either side, sorted by code point (asv's order). */
  readonly names: readonly string[];
  readonly pairs: readonly PairColumn[];
  /** Invocations left without a partner (one side had more). */
  readonly unpaired: number;
}

/** Pairs the i-th invocation of `first` with the i-th of `second` and normalizes each pair. */
export function pairTable(first: readonly ResultSet[], second: readonly ResultSet[], minNormalizationWorkloads: number): PairTable {
  const a = first.map(invocationValues);
  const b = second.map(invocationValues);
  const nameSet = new Set<string>();
  for (const m of [...a, ...b]) for (const n of m.keys()) nameSet.add(n);
  const names = [...nameSet].sort(compareCodePoints);
  const count = Math.min(first.length, second.length);
  const pairs = Array.from({ length: count }, (_, p): PairColumn => {
    const x = a[p]!;
    const y = b[p]!;
    const firstValues = names.map((n) => x.get(n)?.value ?? null);
    const secondValues = names.map((n) => y.get(n)?.value ?? null);
    const versionChanged = names.map((n) => {
      const v1 = x.get(n)?.version ?? null;
      const v2 = y.get(n)?.version ?? null;
      return v1 !== null && v2 !== null && v1 !== v2;
    });
    const logRatios = names.map((_, i) => {
      const f = logOf(firstValues[i]);
      const s = logOf(secondValues[i]);
      return f === null || s === null || versionChanged[i] ? null : s - f;
    });
    const usable = logRatios.filter(present);
    const normalized = usable.length >= minNormalizationWorkloads;
    const logFactor = normalized ? shorthMedian(usable)! : 0;
    return {
      first: first[p]!.source,
      second: second[p]!.source,
      firstValues,
      secondValues,
      versionChanged,
      logRatios,
      logFactor,
      normalized,
      factorWorkloads: normalized ? usable.length : 0,
      normalizedLogs: logRatios.map((l) => (l === null ? null : l - logFactor)),
    };
  });
  return { names, pairs, unpaired: Math.abs(first.length - second.length) };
}

/** One workload's normalized log ratios across the pairs. */
export function workloadLogs(table: PairTable, index: number): (number | null)[] {
  return table.pairs.map((p) => p.normalizedLogs[index] ?? null);
}
