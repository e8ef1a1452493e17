import { stageWorkerHandlers } from '../../executor/stage-remote.js';
import { jobDir } from '../../executor/spool.js';
import { runWorker, WORKER_HANDLERS } from '../../executor/worker.js';
import type { Registry } from '../../registry.js';
import { SCORE_WORKER_HANDLERS } from '../../../tasks/score/remote.js';

/** `perfmine worker`'s action: what a Slurm job runs on its compute node (see executor.slurm). */
export async function workerCommand(flags: { readonly spool: string; readonly job: string }, registry: Registry): Promise<number> {
  const handlers = { ...WORKER_HANDLERS, ...stageWorkerHandlers(Object.values(registry)), ...SCORE_WORKER_HANDLERS };
  return runWorker(jobDir(flags.spool, flags.job), flags.job, handlers);
}
