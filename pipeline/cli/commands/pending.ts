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
  const cache = program.command('cache').description('inspect the build-script cache');
  cache
    .command('scripts')
    .description('list build-script attempts')
    .option('--repo <owner/name>', 'only this repository')
    .action(() => notImplemented('cache scripts', 'the synthesize stage'));
  cache
    .command('show')
    .argument('<owner/name@sha>')
    .description("print a commit's build script and its last failure")
    .action(() => notImplemented('cache show', 'the synthesize stage'));
  cache
    .command('stats')
    .description('per-repository success rate, reuse rate and LLM calls')
    .action(() => notImplemented('cache stats', 'the synthesize stage'));

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
