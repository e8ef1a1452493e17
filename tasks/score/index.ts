import { createHash } from 'node:crypto';
import type { ScoreStore } from '../../cache/scores.js';
import { harborTimeouts, protocolRounds, type HarborOptions } from '../../pipeline/services/verifier/verifier-folder.js';
import { harborTaskInputs } from '../../pipeline/services/verifier/task-inputs.js';
import { ItemError, PerfmineError } from '../../pipeline/errors.js';
import type { Logger } from '../../pipeline/logging.js';
import type { Metrics } from '../../pipeline/metrics.js';
import type { ContainerLimits, DockerService } from '../../pipeline/services/docker.js';
import { runTrial } from '../../pipeline/services/verifier/run-trial.js';
import type { Prediction, RejectedRow } from './predictions.js';
import { emptyPatchResult, SCORE_RULES, sideResultOfTrial, speedupsOf, type SideResult } from './side-result.js';
import type { ScoreTask } from './task-source.js';
import { judgedHack, judgePatch, type Judgement, type JudgeMode } from './judge.js';
import type { LlmService } from '../../pipeline/services/llm-port.js';
import { FAILURE_REWARD } from '../../pipeline/services/verifier/reward-formula.js';
import { scoreTask, type TaskScore } from './task-score.js';

/**
 * perfmine score: each prediction's patch through the Harbor verifier (trial/run-trial.ts: the
 * patch applied in the task's environment as the agent, then tests/test.sh as root: the checks,
 * the hack detector, the measurement of the base, the patch and the expert's patch interleaved,
 * each counted from outside), the expert's patch the same way once per task, and FormulaCode's
 * metrics of the two against each other: the patch's speedups against the expert's measured in
 * the same run (the expert's own run's when the patch's run did not measure it). Each finished
 * side is stored and never measured again under the same rules.
 */

export type { Prediction, RejectedRow } from './predictions.js';
export { aggregateByModel, scoreTask } from './task-score.js';

export interface ScoreDeps {
  readonly docker: DockerService;
  readonly store: ScoreStore;
  /** The Harbor export's settings (limits, validate's correctness settings, the verifier's files). */
  readonly harbor: HarborOptions;
  readonly limits: ContainerLimits;
  /** An environment's build limit (the verifier's own is the task's, as its Harbor export states it). */
  readonly buildTimeoutMs: number;
  /** PIP_INDEX_URL for the environments' builds (the demo's loopback index). */
  readonly indexUrl?: string | null | undefined;
  readonly log: Logger;
  readonly metrics?: Metrics;
  readonly signal?: AbortSignal;
  /** Measure again what is stored. */
  readonly force?: boolean;
  /** Sides this run measured elsewhere (Slurm jobs) and stored, by sideKey: reported as measured, never measured again here. */
  readonly measuredElsewhere?: ReadonlySet<string>;
  /** Sides whose measurement elsewhere broke, by sideKey: their rows are errors, not measured here. */
  readonly failedElsewhere?: ReadonlyMap<string, PerfmineError>;
  /** The rubric judge (judge.ts) on every patch the verifier passed; absent or `off`: none. */
  readonly judge?: { readonly mode: JudgeMode; readonly llm: LlmService };
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
  /** The verifier's reward (Harbor's reward.json), null when nothing was verified. */
  readonly reward: number | null;
  /** The hack detector's findings, `rule: path` (a hack fails the patch; a suspect is reported). */
  readonly hacks: readonly string[];
  readonly suspects: readonly string[];
  /** The rubric judge's answer (`--judge`), null when not asked; `judge_error` when asking broke in report mode. */
  readonly judge: Judgement | null;
  readonly judge_error: string | null;
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
  reward: null,
  hacks: [],
  suspects: [],
  judge: null,
  judge_error: null,
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

/** The verifier's time limit for a task (ms), as its Harbor export states it. */
function verifierTimeout(task: ScoreTask, deps: Pick<ScoreDeps, 'harbor'>): number {
  const inputs = harborTaskInputs(task.task);
  return harborTimeouts(inputs.measuredMs, deps.harbor.buildTimeoutSeconds, protocolRounds(inputs.protocol)).verifier * 1000;
}

/** Verifies one side: the patch through the Harbor verifier in the task's environment (an empty patch needs no run). */
export async function measureSide(
  task: ScoreTask,
  patch: string,
  deps: Pick<ScoreDeps, 'docker' | 'harbor' | 'limits' | 'buildTimeoutMs' | 'indexUrl' | 'log' | 'metrics' | 'signal'>,
): Promise<SideResult> {
  if (patch.trim() === '') return { ...emptyPatchResult(), rules: SCORE_RULES };
  deps.log.info("scoring: the verifier on the patch, in the task's environment");
  const trial = await runTrial({
    docker: deps.docker,
    task: task.task,
    harbor: deps.harbor,
    patch,
    limits: deps.limits,
    timeoutMs: verifierTimeout(task, deps),
    buildTimeoutMs: deps.buildTimeoutMs,
    ...(deps.indexUrl ? { indexUrl: deps.indexUrl } : {}),
    labels: { 'org.perfmine.item': task.instanceId },
    log: deps.log,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  deps.metrics?.add('score.measured', 1);
  if (trial.output?.reward['verifier_error'] === 1) {
    const why = trial.output.details?.error?.message ?? (trial.timedOut ? 'it ran out of its time' : 'no details');
    throw new ItemError('verifier-failed', `the verifier could not verify: ${why}`);
  }
  return sideResultOfTrial(trial);
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
  // a side taken under other rules (validate's machinery before the verifier) is measured again
  if (stored && (stored.result as SideResult).rules === SCORE_RULES) return { result: stored.result as SideResult, measured: elsewhere };
  const log = deps.log.child({ stage: 'score', item: task.instanceId, side: which, model });
  const result = await measureSide(task, patch, { ...deps, log });
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
    const { judgement, judgeError } = await judged(task, p, agent.result, deps);
    const hack = judgedHack(deps.judge?.mode ?? 'off', judgement);
    const a: SideResult = hack
      ? {
          ...agent.result,
          detail: `the rubric judge (${judgement!.model}) calls it a hack: ${judgement!.patterns.join(', ') || 'no pattern named'}`,
        }
      : agent.result;
    const failure = hack ? 'judged-hack' : a.failure;
    // the expert's patch as measured in the same run as the agent's, where it was; else in its own run
    const reference = a.reference && a.reference.length > 0 ? a.reference : expert.result.workloads;
    const score = scoreTask(failure === null ? speedupsOf(a) : null, speedupsOf({ ...expert.result, workloads: reference }));
    const agentVerdicts = new Map(a.workloads.map((w) => [w.name, w.change]));
    const expertVerdicts = new Map(reference.map((w) => [w.name, w.change]));
    return {
      ...head,
      status: failure === null ? 'scored' : 'failed',
      failure,
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
      reward: hack ? FAILURE_REWARD : (a.reward?.['reward'] ?? null),
      hacks: (a.findings ?? []).filter((f) => f.severity === 'hack').map((f) => `${f.rule}: ${f.path ?? ''}`),
      suspects: (a.findings ?? []).filter((f) => f.severity === 'suspect').map((f) => `${f.rule}: ${f.path ?? ''}`),
      judge: judgement,
      judge_error: judgeError,
      workloads: score.workloads.map((w) => ({
        name: w.name,
        agent_speedup: w.agent,
        expert_speedup: w.expert,
        agent_verdict: failure === null ? (agentVerdicts.get(w.name) ?? null) : null,
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

/**
 * The rubric judge on a patch the verifier passed (none on a failed or empty one: the verifier's
 * verdict stands). In report mode a judge that cannot answer leaves the row scored, with why; in
 * enforce mode it makes the row an error, retried on the next run.
 */
async function judged(
  task: ScoreTask,
  p: Prediction,
  side: SideResult,
  deps: ScoreDeps,
): Promise<{ judgement: Judgement | null; judgeError: string | null }> {
  if (!deps.judge || deps.judge.mode === 'off' || side.failure !== null || p.patch.trim() === '')
    return { judgement: null, judgeError: null };
  try {
    const item = `${task.instanceId}:${p.model}`;
    return {
      judgement: await judgePatch(deps.judge.llm, task, p.patch, side, { item, ...(deps.signal ? { signal: deps.signal } : {}) }),
      judgeError: null,
    };
  } catch (error) {
    if (deps.judge.mode === 'enforce' || !(error instanceof PerfmineError)) throw error;
    deps.log.warn({ stage: 'score', item: task.instanceId, model: p.model, err: error.message }, 'the rubric judge could not answer');
    return { judgement: null, judgeError: error.message };
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
