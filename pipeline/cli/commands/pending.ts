import type { Command } from 'commander';
import { ConfigError } from '../../errors.js';

/**
 * Commands of the design whose implementation has not landed in this version: they have their
 * help and options, and say so instead of pretending.
 */
export function notImplemented(what: string, arrivesWith: string): never {
  throw new ConfigError(`${what}: not implemented in this version of perfmine`, { reason: 'not-implemented', fix: `arrives with ${arrivesWith}` });
}

export function registerPending(program: Command): void {
  program
    .command('compare')
    .description("compare two asv results files (or directories of per-invocation files), as asv compare does")
    .argument('<base>')
    .argument('<head>')
    .option('--benchmarks <benchmarks.json>')
    .option('--factor <F>', 'ratio that counts as a change', '1.1')
    .option('--only-changed')
    .action(() => notImplemented('compare', 'the asv results and statistics module'));

  program
    .command('tasks')
    .description('list the emitted tasks')
    .option('--month <YYYY-MM>')
    .action(() => notImplemented('tasks', 'the emit stage'));

  program
    .command('report')
    .description('write a static HTML report of a month')
    .option('--month <YYYY-MM>')
    .requiredOption('--out <report.html>')
    .action(() => notImplemented('report', 'the monthly refresh'));

  program
    .command('doctor')
    .description('check the Docker engine, base image, asv in the image, credentials, LLM endpoint and schema')
    .action(() => notImplemented('doctor', 'the monthly refresh'));
}
