import type { Command } from 'commander';
import { jobDir } from '../../executor/spool.js';
import { runWorker } from '../../executor/worker.js';

/** `perfmine worker`: what a Slurm job runs on its compute node (see executor.slurm). */
export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('run one Slurm job of the slurm executor: read its input from the spool, run the item against this node\'s Docker engine, write its result (internal: sbatch scripts call it)')
    .requiredOption('--spool <dir>', 'the shared spool directory (executor.slurm.spool)')
    .requiredOption('--job <name>', "the job's name (its directory under <spool>/jobs)")
    .action(async (flags: { spool: string; job: string }) => {
      process.exitCode = await runWorker(jobDir(flags.spool, flags.job), flags.job);
    });
}
