import { hierarchyKey, type HierarchyLevel } from './workloads.js';

/**
 * FormulaCode's metrics. A speedup is time(base) / time(patched) per workload (> 1: faster);
 * a solution's overall speedup is the geometric mean over workloads; an agent's advantage is its
 * overall speedup minus the expert's, on the workloads both were measured on; the stratified
 * advantage averages per-group advantages at module, class or function level; the normalized
 * advantage divides the advantage by sqrt(var(agent) + var(expert)) of the per-workload speedups.
 */

/** Per-workload speedups by workload name. */
export type Speedups = ReadonlyMap<string, number>;

function usable(t: number | null | undefined): t is number {
  return typeof t === 'number' && Number.isFinite(t) && t > 0;
}

/** time(base) / time(patched); null unless both times are positive and finite. */
export function speedup(baseTime: number | null | undefined, patchedTime: number | null | undefined): number | null {
  return usable(baseTime) && usable(patchedTime) ? baseTime / patchedTime : null;
}

/** Speedups of every workload timed on both sides (failed, skipped and missing ones left out). */
export function workloadSpeedups(
  base: ReadonlyMap<string, number | null>,
  patched: ReadonlyMap<string, number | null>,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, t] of base) {
    const s = speedup(t, patched.get(name));
    if (s !== null) out.set(name, s);
  }
  return out;
}

/** The geometric mean; null for no values or a value that is not positive and finite. */
export function geometricMean(values: Iterable<number>): number | null {
  let sum = 0;
  let n = 0;
  for (const v of values) {
    if (!usable(v)) return null;
    sum += Math.log(v);
    n++;
  }
  return n === 0 ? null : Math.exp(sum / n);
}

/** Overall speedup of a solution: the geometric mean of its per-workload speedups. */
export function overallSpeedup(speedups: Speedups): number | null {
  return geometricMean(speedups.values());
}

/** The population variance (numpy's default); null for no values. */
export function variance(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const mean = values.reduce((a, v) => a + v, 0) / values.length;
  return values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length;
}

/** Both solutions' speedups restricted to the workloads both have, in the agent's order. */
export function commonWorkloads(agent: Speedups, expert: Speedups): { names: string[]; agent: number[]; expert: number[] } {
  const names = [...agent.keys()].filter((n) => expert.has(n));
  return { names, agent: names.map((n) => agent.get(n)!), expert: names.map((n) => expert.get(n)!) };
}

/** speedup(agent) − speedup(expert) over the common workloads; null when there are none. */
export function advantage(agent: Speedups, expert: Speedups): number | null {
  const common = commonWorkloads(agent, expert);
  const a = geometricMean(common.agent);
  const e = geometricMean(common.expert);
  return a === null || e === null ? null : a - e;
}

/** One group's speedups and advantage at a hierarchy level. */
export interface StratumAdvantage {
  readonly key: string;
  readonly workloads: number;
  readonly agent: number;
  readonly expert: number;
  readonly advantage: number;
}

export interface StratifiedAdvantage {
  readonly level: HierarchyLevel;
  /** Groups sorted by key. */
  readonly strata: readonly StratumAdvantage[];
  /** Mean of the groups' advantages (each group counts once); null with no common workloads. */
  readonly advantage: number | null;
}

/**
 * The advantage per module, class or function (grouping workload names by {@link hierarchyKey})
 * and its mean over groups, so that a suite with many workloads in one class does not outweigh
 * the rest.
 */
export function stratifiedAdvantage(agent: Speedups, expert: Speedups, level: HierarchyLevel): StratifiedAdvantage {
  const common = commonWorkloads(agent, expert);
  const groups = new Map<string, { agent: number[]; expert: number[] }>();
  common.names.forEach((name, i) => {
    const key = hierarchyKey(name, level);
    const g = groups.get(key) ?? { agent: [], expert: [] };
    g.agent.push(common.agent[i]!);
    g.expert.push(common.expert[i]!);
    groups.set(key, g);
  });
  const strata = [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, g]): StratumAdvantage => {
      const a = geometricMean(g.agent)!;
      const e = geometricMean(g.expert)!;
      return { key, workloads: g.agent.length, agent: a, expert: e, advantage: a - e };
    });
  const mean = strata.length === 0 ? null : strata.reduce((s, x) => s + x.advantage, 0) / strata.length;
  return { level, strata, advantage: mean };
}

/**
 * advantage / sqrt(var(agent) + var(expert)), the variances taken over the per-workload speedups
 * of the common workloads; null when undefined (no common workloads, or both variances zero).
 */
export function normalizedAdvantage(agent: Speedups, expert: Speedups): number | null {
  const adv = advantage(agent, expert);
  if (adv === null) return null;
  const common = commonWorkloads(agent, expert);
  const spread = Math.sqrt(variance(common.agent)! + variance(common.expert)!);
  return spread > 0 ? adv / spread : null;
}
