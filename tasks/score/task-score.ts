import {
  advantage,
  commonWorkloads,
  normalizedAdvantage,
  overallSpeedup,
  stratifiedAdvantage,
  type Speedups,
  type StratifiedAdvantage,
} from '../../pipeline/concepts/asv/metrics.js';

/**
 * One prediction's score on one task, with FormulaCode's metrics (stages/validate/asv/metrics.ts):
 * the agent's and the expert's per-workload speedups (each against its own base, measured in the
 * same interleaved protocol), their overall speedups (geometric means), the advantage, the
 * stratified advantage at module, class and function level, and the normalized advantage. Pure.
 *
 * A prediction that failed (its patch does not apply, its build fails, a test the base passes no
 * longer passes, a benchmark's return value changed, a benchmark fails on it) is scored as the
 * unchanged repository: speedup 1 on every workload the expert was measured on, so its advantage
 * is 1 − the expert's speedup. Workloads measured on only one side, or failed on one side, are
 * left out of the comparison and listed with the reason.
 */

export type WorkloadNote = 'missing-on-agent' | 'missing-on-expert';

export interface WorkloadScore {
  readonly name: string;
  readonly agent: number | null;
  readonly expert: number | null;
  /** Why the workload is not in the comparison (null: it is). */
  readonly note: WorkloadNote | null;
}

export interface TaskScore {
  /** Workloads on both sides, the ones the metrics are computed over. */
  readonly compared: number;
  readonly agentSpeedup: number | null;
  readonly expertSpeedup: number | null;
  readonly advantage: number | null;
  readonly stratified: {
    readonly module: StratifiedAdvantage;
    readonly class: StratifiedAdvantage;
    readonly function: StratifiedAdvantage;
  };
  readonly normalizedAdvantage: number | null;
  /** Every workload of either side, sorted by name. */
  readonly workloads: readonly WorkloadScore[];
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The score of an agent's speedups against the expert's; `agent: null` for a failed prediction (speedup 1 everywhere). */
export function scoreTask(agentSpeedups: Speedups | null, expert: Speedups): TaskScore {
  const agent: Speedups = agentSpeedups ?? new Map([...expert.keys()].map((n) => [n, 1]));
  const names = [...new Set([...agent.keys(), ...expert.keys()])].sort(byName);
  const workloads = names.map((name): WorkloadScore => {
    const a = agent.get(name) ?? null;
    const e = expert.get(name) ?? null;
    return { name, agent: a, expert: e, note: a === null ? 'missing-on-agent' : e === null ? 'missing-on-expert' : null };
  });
  const common = commonWorkloads(agent, expert);
  const mapOf = (values: number[]) => new Map(common.names.map((n, i) => [n, values[i]!]));
  return {
    compared: common.names.length,
    agentSpeedup: overallSpeedup(mapOf(common.agent)),
    expertSpeedup: overallSpeedup(mapOf(common.expert)),
    advantage: advantage(agent, expert),
    stratified: {
      module: stratifiedAdvantage(agent, expert, 'module'),
      class: stratifiedAdvantage(agent, expert, 'class'),
      function: stratifiedAdvantage(agent, expert, 'function'),
    },
    normalizedAdvantage: normalizedAdvantage(agent, expert),
    workloads,
  };
}

/** One scored prediction, as the aggregate needs it. */
export interface ScoredPrediction {
  readonly model: string;
  readonly instanceId: string;
  /** null: the prediction passed every check; else the named failure. */
  readonly failure: string | null;
  readonly score: TaskScore | null;
}

/** One model's line of the aggregate table (FormulaCode's leaderboard columns). */
export interface ModelAggregate {
  readonly model: string;
  readonly tasks: number;
  /** Predictions that passed every check. */
  readonly passed: number;
  readonly failed: number;
  /** Means over the tasks with a defined value (failed predictions count, scored as unchanged). */
  readonly meanAgentSpeedup: number | null;
  readonly meanExpertSpeedup: number | null;
  readonly meanAdvantage: number | null;
  readonly meanModuleAdvantage: number | null;
  readonly meanClassAdvantage: number | null;
  readonly meanFunctionAdvantage: number | null;
  readonly meanNormalizedAdvantage: number | null;
  /** Tasks where the agent's speedup is above the expert's (advantage > 0). */
  readonly beatExpert: number;
}

function mean(values: readonly (number | null)[]): number | null {
  const usable = values.filter((v): v is number => v !== null && Number.isFinite(v));
  return usable.length === 0 ? null : usable.reduce((a, v) => a + v, 0) / usable.length;
}

/** The aggregate table by model, models sorted by name. Pure. */
export function aggregateByModel(rows: readonly ScoredPrediction[]): ModelAggregate[] {
  const groups = new Map<string, ScoredPrediction[]>();
  for (const r of rows) groups.set(r.model, [...(groups.get(r.model) ?? []), r]);
  return [...groups.entries()]
    .sort(([a], [b]) => byName(a, b))
    .map(([model, rs]): ModelAggregate => {
      const s = rs.map((r) => r.score);
      return {
        model,
        tasks: rs.length,
        passed: rs.filter((r) => r.failure === null).length,
        failed: rs.filter((r) => r.failure !== null).length,
        meanAgentSpeedup: mean(s.map((x) => x?.agentSpeedup ?? null)),
        meanExpertSpeedup: mean(s.map((x) => x?.expertSpeedup ?? null)),
        meanAdvantage: mean(s.map((x) => x?.advantage ?? null)),
        meanModuleAdvantage: mean(s.map((x) => x?.stratified.module.advantage ?? null)),
        meanClassAdvantage: mean(s.map((x) => x?.stratified.class.advantage ?? null)),
        meanFunctionAdvantage: mean(s.map((x) => x?.stratified.function.advantage ?? null)),
        meanNormalizedAdvantage: mean(s.map((x) => x?.normalizedAdvantage ?? null)),
        beatExpert: s.filter((x) => x?.advantage !== null && x?.advantage !== undefined && x.advantage > 0).length,
      };
    });
}
