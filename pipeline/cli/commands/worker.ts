import { jobDir } from '../../executor/spool.js';
import { runWorker } from '../../executor/worker.js';

/** `perfmine worker`'s action: what a Slurm job runs on its compute node (see executor.slurm). */
export async function workerCommand(flags: { readonly spool: string; readonly job: string }): Promise<number> {
  return runWorker(jobDir(flags.spool, flags.job), flags.job);
}
