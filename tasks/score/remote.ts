import { z } from 'zod';
import { ScoreStore } from '../../cache/scores.js';
import type { BlobRef } from '../../cache/blobs.js';
import type { Db } from '../../cache/store.js';
import type { Config } from '../../pipeline/config/schema.js';
import { ItemError, PerfmineError } from '../../pipeline/errors.js';
import { decodeNumbers, encodeNumbers } from '../../pipeline/executor/stage-remote.js';
import { SlurmExecutor, type RemoteJob } from '../../pipeline/executor/slurm-executor.js';
import { nodeSession, type WorkerHandler } from '../../pipeline/executor/worker.js';
import { hashOf } from '../../pipeline/hash.js';
import type { Logger } from '../../pipeline/logging.js';
import { Metrics } from '../../pipeline/metrics.js';
import { containerLimits, DockerService } from '../../pipeline/services/docker.js';
import { SlurmAdapter } from '../../pipeline/services/slurm.js';
import { harborOptionsOf } from '../../pipeline/services/verifier/options.js';
import { measureSide, sha256, sideKey, type ScoreDeps } from './index.js';
import type { Prediction } from './predictions.js';
import type { SideResult } from './side-result.js';
import type { ScoreTask } from './task-source.js';

/**
 * `perfmine score` under `executor: slurm`: each side to verify (the expert's patch of each task,
 * then each prediction's patch whose task's expert passed) is a Slurm job running measureSide (the
 * Harbor verifier in the task's environment) on a compute node, the task's files and bundles in
 * its payload (a node reads no store); the coordinator stores each result as it is ingested, and
 * the rows are then assembled from the store exactly as when everything ran here.
 */

export const SCORE_SIDE_KIND = 'score-side';

const payloadSchema = z
  .object({
    task: z.object({
      instanceId: z.string(),
      expertPatch: z.string(),
      row: z.object({ instance_id: z.string(), repo: z.string() }).passthrough(),
      files: z.record(z.string(), z.string()),
      blobs: z.record(z.string(), z.string()),
    }),
    patch: z.string(),
    config: z.unknown(),
  })
  .strict();

/** What a run of the verifier needs from perfmine's configuration and engine. */
export function verifierDeps(
  config: Config,
  docker: DockerService,
  indexUrl: string | null,
): Pick<ScoreDeps, 'docker' | 'harbor' | 'limits' | 'buildTimeoutMs' | 'indexUrl'> {
  return {
    docker,
    harbor: harborOptionsOf(config),
    limits: containerLimits(config.docker),
    buildTimeoutMs: config.validate.buildTimeoutSeconds * 1000,
    indexUrl,
  };
}

function blob(data: Buffer): BlobRef {
  return { sha256: sha256Bytes(data), size: data.length, read: () => data };
}

function sha256Bytes(data: Buffer): string {
  return hashOf(data.toString('base64'));
}

/** The node's side: one patch through the verifier. */
const scoreSide: WorkerHandler = async (input, env) => {
  const p = payloadSchema.parse(input.payload);
  const { config, log } = nodeSession(p.config);
  const metrics = new Metrics();
  const blobs = Object.fromEntries(Object.entries(p.task.blobs).map(([path, b64]) => [path, blob(Buffer.from(b64, 'base64'))]));
  const task: ScoreTask = {
    instanceId: p.task.instanceId,
    expertPatch: p.task.expertPatch,
    task: { row: p.task.row as ScoreTask['task']['row'], files: p.task.files, blobs },
  };
  const result = await measureSide(task, p.patch, {
    ...verifierDeps(config, new DockerService({ runLabel: 'score', metrics }), null),
    log,
    metrics,
    signal: env.signal,
  });
  return encodeNumbers(result);
};

/** A task as a job's payload: its files and its bundles' bytes. */
function taskPayload(task: ScoreTask): z.infer<typeof payloadSchema>['task'] {
  return {
    instanceId: task.instanceId,
    expertPatch: task.expertPatch,
    row: { ...task.task.row },
    files: { ...task.task.files },
    blobs: Object.fromEntries(Object.entries(task.task.blobs).map(([path, ref]) => [path, ref.read().toString('base64')])),
  };
}

export const SCORE_WORKER_HANDLERS: Readonly<Record<string, WorkerHandler>> = { [SCORE_SIDE_KIND]: scoreSide };

interface SideJob {
  readonly task: ScoreTask;
  readonly which: 'expert' | 'agent';
  readonly model: string;
  readonly patch: string;
}

export interface RemoteSides {
  readonly measuredElsewhere: Set<string>;
  readonly failedElsewhere: Map<string, PerfmineError>;
}

/** Measures the sides this run needs (not stored, or all with `force`) as Slurm jobs, experts first; stores each result. */
export async function measureSidesOnSlurm(options: {
  readonly db: Db;
  /** The configuration the sides are measured with (validate's, as scoring overrides it). */
  readonly config: Config;
  readonly log: Logger;
  readonly tasks: ReadonlyMap<string, ScoreTask>;
  readonly predictions: readonly Prediction[];
  readonly force: boolean;
  readonly signal?: AbortSignal;
  /** Adapter to use (tests); default: the Slurm commands on PATH. */
  readonly slurm?: SlurmAdapter;
}): Promise<RemoteSides> {
  const { db, config, log, tasks } = options;
  const store = new ScoreStore(db);
  const out: RemoteSides = { measuredElsewhere: new Set(), failedElsewhere: new Map() };
  const pending = (sides: readonly SideJob[]) => {
    const seen = new Map<string, SideJob>();
    for (const s of sides) {
      const key = sideKey(s.task.instanceId, s.which, s.model, sha256(s.patch));
      if (seen.has(key) || s.patch.trim() === '') continue;
      if (!options.force && store.get(s.task.instanceId, s.which, s.model, sha256(s.patch))) continue;
      seen.set(key, s);
    }
    return seen;
  };
  const run = async (sides: ReadonlyMap<string, SideJob>) => {
    if (sides.size === 0) return;
    const jobs: RemoteJob[] = [...sides].map(([key, s]) => {
      const payload = { task: taskPayload(s.task), patch: s.patch, config };
      return { key, inputHash: hashOf(payload), kind: SCORE_SIDE_KIND, payload };
    });
    const executor = new SlurmExecutor({
      db,
      slurm: options.slurm ?? new SlurmAdapter(),
      config: config.executor.slurm,
      stage: 'score',
      runId: null,
      log,
      hard: options.signal,
    });
    const report = await executor.run(jobs, {
      ingest(key, output) {
        const s = sides.get(key)!;
        const side = decodeNumbers(output) as SideResult;
        store.save({
          instanceId: s.task.instanceId,
          side: s.which,
          model: s.model,
          patchSha256: sha256(s.patch),
          failure: side.failure,
          result: side,
        });
        out.measuredElsewhere.add(key);
      },
      fail(key, error) {
        out.failedElsewhere.set(
          key,
          error instanceof PerfmineError
            ? error
            : new ItemError('slurm-job-failed', error instanceof Error ? error.message : String(error)),
        );
      },
    });
    log.info({ stage: 'score', ...report }, 'slurm executor: scoring jobs finished');
  };

  const experts = [...tasks.values()].map((task): SideJob => ({ task, which: 'expert', model: '', patch: task.expertPatch }));
  await run(pending(experts));
  // an agent's patch is measured only against an expert that passed (as when scoring here)
  const expertPassed = (task: ScoreTask) => {
    const hash = sha256(task.expertPatch);
    if (out.failedElsewhere.has(sideKey(task.instanceId, 'expert', '', hash))) return false;
    const stored = store.get(task.instanceId, 'expert', '', hash);
    return stored === null || stored.failure === null;
  };
  const agents = options.predictions
    .map((p) => ({ p, task: tasks.get(p.instanceId) }))
    .filter((x): x is { p: Prediction; task: ScoreTask } => x.task !== undefined && expertPassed(x.task))
    .map(({ p, task }): SideJob => ({ task, which: 'agent', model: p.model, patch: p.patch }));
  await run(pending(agents));
  return out;
}
