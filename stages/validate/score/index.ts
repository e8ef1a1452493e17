import { createHash } from 'node:crypto';
import type { FingerprintCache } from '../../../cache/fingerprints.js';
import type { ScoreStore } from '../../../cache/scores.js';
import { measuredPatch } from '../../../pipeline/concepts/measured-patch.js';
import { PerfmineError } from '../../../pipeline/errors.js';
import type { Logger } from '../../../pipeline/logging.js';
import type { Metrics } from '../../../pipeline/metrics.js';
import type { ValidateConfig } from '../config.js';
import type { MeasurementRunner } from '../runner-port.js';
import { validateCandidate } from '../validate-candidate.js';
import type { Prediction, RejectedRow } from './predictions.js';
import { emptyPatchResult, sideResultOf, speedupsOf, type SideResult } from './side-result.js';
import type { ScoreTask } from './task-source.js';
import { scoreTask, type TaskScore } from './task-score.js';

/**
 * perfmine score: each prediction's patch through validate's machinery (built on the task's
 * verified environment; the tests the base passes and the benchmarks' return values checked;
 * then, if it passed them, measured against the base with validate's engine and protocol,
 * whatever the measurement finds), the expert's patch the same way once per task, and
 * FormulaCode's metrics of the two against each other. Each finished side is stored and never measured again.
 */

export type { Prediction, RejectedRow } from './predictions.js';
export { aggregateByModel, scoreTask } from './task-score.js';

export interface ScoreDeps {
  readonly runner: MeasurementRunner;
  readonly store: ScoreStore;
  /** validate's configuration (engine, protocol, checks), as validate measured the expert. */
  readonly config: ValidateConfig;
  readonly log: Logger;
  readonly metrics?: Metrics;
  readonly fingerprints?: FingerprintCache;
  readonly signal?: AbortSignal;
  /** Measure again what is stored. */
  readonly force?: boolean;
  /** Sides this run measured elsewhere (Slurm jobs) and stored, by sideKey: reported as measured, never measured again here. */
  readonly measuredElsewhere?: ReadonlySet<string>;
  /** Sides whose measurement elsewhere broke, by sideKey: their rows are errors, not measured here. */
  readonly failedElsewhere?: ReadonlyMap<string, PerfmineError>;
}

/** One side's identity in the store (and in the Slurm jobs that measure it). */
export function sideKey(instanceId: string, which: 'expert' | 'agent', model: string, patchSha256: string): string {
  return `${instanceId}\0${which}\0${model}\0${patchSha256}`;
}

export type RowStatus = 'scored' | 'failed' | 'rejected' | 'error';

/** One row of the results (JSONL), per prediction. */
export interface PredictionResult {
  readonly instance_id: string | null;
  readonly model_name_or_path: string | null;
  /** Line or element of the predictions file. */
  readonly row: number;
  /** scored: every check passed; failed: a named failure of the patch; rejected: a bad row; error: scoring broke (retried next time). */
  readonly status: RowStatus;
  readonly failure: string | null;
  readonly detail: string;
  /** Whether this run measured the prediction (false: the stored result was reused). */
  readonly measured: boolean;
  readonly agent_speedup: number | null;
  readonly expert_speedup: number | null;
  readonly advantage: number | null;
  readonly advantage_module: number | null;
  readonly advantage_class: number | null;
  readonly advantage_function: number | null;
  readonly normalized_advantage: number | null;
  readonly regressed_tests: readonly string[];
  readonly snapshot_mismatches: readonly string[];
  readonly workloads: readonly {
    readonly name: string;
    readonly agent_speedup: number | null;
    readonly expert_speedup: number | null;
    readonly agent_verdict: string | null;
    readonly expert_verdict: string | null;
    readonly note: string | null;
  }[];
  /** The full score (strata and all), for the aggregate. */
  readonly score: TaskScore | null;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

const EMPTY: Omit<PredictionResult, 'instance_id' | 'model_name_or_path' | 'row' | 'status' | 'failure' | 'detail'> = {
  measured: false,
  agent_speedup: null,
  expert_speedup: null,
  advantage: null,
  advantage_module: null,
  advantage_class: null,
  advantage_function: null,
  normalized_advantage: null,
  regressed_tests: [],
  snapshot_mismatches: [],
  workloads: [],
  score: null,
};

export function rejectedResult(r: RejectedRow): PredictionResult {
  return {
    ...EMPTY,
    instance_id: r.instanceId,
    model_name_or_path: r.model,
    row: r.row,
    status: 'rejected',
    failure: r.reason,
    detail: r.message,
  };
}

/** Measures one side: the patch through validate's machinery against the base (an empty patch needs no measuring). */
export async function measureSide(
  candidate: ScoreTask['candidate'],
  patch: string,
  deps: Pick<ScoreDeps, 'runner' | 'config' | 'log' | 'metrics' | 'fingerprints' | 'signal'>,
): Promise<SideResult> {
  if (patch.trim() === '') return emptyPatchResult();
  // a patch of benchmarks and tests alone changes nothing that is measured (both sides keep the base's)
  const kept = measuredPatch(patch, candidate.layout);
  if (kept.patch.trim() === '')
    return emptyPatchResult(
      `the patch changes only what both sides keep from the base (benchmarks, asv config, tests): ${kept.dropped.join(', ')}`,
    );
  deps.log.info('scoring: building and measuring the patch against the base');
  const validation = await validateCandidate({ ...candidate, patch }, deps, { requireImprovement: false });
  deps.metrics?.add('score.measured', 1);
  return sideResultOf(validation);
}

/** One side: the stored result, else measured (and stored). */
async function side(
  task: ScoreTask,
  which: 'expert' | 'agent',
  model: string,
  patch: string,
  deps: ScoreDeps,
): Promise<{ result: SideResult; measured: boolean }> {
  const hash = sha256(patch);
  const key = sideKey(task.instanceId, which, model, hash);
  const failed = deps.failedElsewhere?.get(key);
  if (failed) throw failed;
  const elsewhere = deps.measuredElsewhere?.has(key) ?? false;
  const stored = deps.force && !elsewhere ? null : deps.store.get(task.instanceId, which, model, hash);
  if (stored) return { result: stored.result as SideResult, measured: elsewhere };
  const log = deps.log.child({ stage: 'score', item: task.instanceId, side: which, model });
  const result = await measureSide(task.candidate, patch, { ...deps, log });
  deps.store.save({ instanceId: task.instanceId, side: which, model, patchSha256: hash, failure: result.failure, result });
  return { result, measured: true };
}

/** Scores one prediction against its task. */
export async function scorePrediction(task: ScoreTask, p: Prediction, deps: ScoreDeps): Promise<PredictionResult> {
  const head = { instance_id: p.instanceId, model_name_or_path: p.model, row: p.row };
  try {
    const expert = await side(task, 'expert', '', task.expertPatch, deps);
    if (expert.result.failure !== null) {
      return {
        ...EMPTY,
        ...head,
        status: 'error',
        failure: 'expert-failed',
        detail: `the expert's patch failed when measured for scoring: ${expert.result.failure}: ${expert.result.detail}`,
        measured: expert.measured,
      };
    }
    const agent = await side(task, 'agent', p.model, p.patch, deps);
    const a = agent.result;
    const score = scoreTask(a.failure === null ? speedupsOf(a) : null, speedupsOf(expert.result));
    const agentVerdicts = new Map(a.workloads.map((w) => [w.name, w.change]));
    const expertVerdicts = new Map(expert.result.workloads.map((w) => [w.name, w.change]));
    return {
      ...head,
      status: a.failure === null ? 'scored' : 'failed',
      failure: a.failure,
      detail: a.detail,
      measured: agent.measured || expert.measured,
      agent_speedup: score.agentSpeedup,
      expert_speedup: score.expertSpeedup,
      advantage: score.advantage,
      advantage_module: score.stratified.module.advantage,
      advantage_class: score.stratified.class.advantage,
      advantage_function: score.stratified.function.advantage,
      normalized_advantage: score.normalizedAdvantage,
      regressed_tests: a.regressedTests,
      snapshot_mismatches: a.snapshotMismatches,
      workloads: score.workloads.map((w) => ({
        name: w.name,
        agent_speedup: w.agent,
        expert_speedup: w.expert,
        agent_verdict: a.failure === null ? (agentVerdicts.get(w.name) ?? null) : null,
        expert_verdict: expertVerdicts.get(w.name) ?? null,
        note: w.note,
      })),
      score,
    };
  } catch (error) {
    // an outside failure or one of the item (the snapshot helper wrote nothing, ...): not stored, retried next time
    if (!(error instanceof PerfmineError)) throw error;
    deps.log.warn({ stage: 'score', item: p.instanceId, model: p.model, reason: error.reason, err: error.message }, 'scoring failed');
    return { ...EMPTY, ...head, status: 'error', failure: error.reason, detail: error.message };
  }
}

/** Every prediction in order (one at a time: measurement holds the machine), rejected rows as they were named. */
export async function scorePredictions(
  tasks: ReadonlyMap<string, ScoreTask>,
  predictions: readonly Prediction[],
  rejected: readonly RejectedRow[],
  deps: ScoreDeps,
): Promise<PredictionResult[]> {
  const out: PredictionResult[] = rejected.map(rejectedResult);
  for (const p of predictions) {
    deps.signal?.throwIfAborted();
    const task = tasks.get(p.instanceId);
    if (!task) {
      out.push({
        ...EMPTY,
        instance_id: p.instanceId,
        model_name_or_path: p.model,
        row: p.row,
        status: 'rejected',
        failure: 'unknown-instance',
        detail: `${p.instanceId} is not an emitted task`,
      });
      continue;
    }
    out.push(await scorePrediction(task, p, deps));
  }
  return out.sort((a, b) => a.row - b.row);
}
