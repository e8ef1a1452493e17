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
    .command('report')
    .description('write a static HTML report of a month')
    .option('--month <YYYY-MM>')
    .requiredOption('--out <report.html>')
    .action(() => notImplemented('report', 'the monthly refresh'));
}
