import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { createSampleRepo } from '../../demo/sample-repo.js';
import type { Registry } from '../../registry.js';
import { print, type GlobalFlags } from '../session.js';
import { runCommand } from './run.js';
import { statusCommand } from './status.js';

interface DemoFlags {
  readonly dir: string;
  readonly fresh?: boolean;
}

export const DEMO_MONTH = '2025-04';
export const DEMO_REPO = 'demo/fastmath';

export function registerDemo(program: Command, registry: Registry): void {
  program
    .command('demo')
    .description('run the main job on the embedded default: a generated sample repository, no credentials, local SQLite')
    .option('--dir <dir>', 'where the sample repository, database and dataset go', 'perfmine-demo')
    .option('--fresh', 'delete the directory first and start over')
    .action(async (flags: DemoFlags, command: Command) => {
      process.exitCode = await demoCommand(flags, command.optsWithGlobals<GlobalFlags>(), registry);
    });
}

/**
 * The README's first command: creates `fastmath`, a small Python library with asv benchmarks and
 * a month of pull requests (merge and squash commits), then runs the whole pipeline over it with
 * the git source, no LLM, a local database and the local Docker engine, and prints the funnel.
 */
export async function demoCommand(flags: DemoFlags, globals: GlobalFlags, registry: Registry): Promise<number> {
  const dir = resolve(flags.dir);
  if (flags.fresh) rmSync(dir, { recursive: true, force: true });
  const repoPath = join(dir, 'fastmath');
  if (!existsSync(repoPath)) {
    const sample = createSampleRepo(repoPath, DEMO_MONTH);
    print(`created the sample repository ${repoPath}: ${sample.pullRequests.length} pull requests merged in ${DEMO_MONTH}`);
    for (const pr of sample.pullRequests) print(`  #${pr.number} (${pr.style}) ${pr.title}`);
  } else {
    print(`using the sample repository ${repoPath} (--fresh starts over)`);
  }
  const demoGlobals: GlobalFlags = { ...globals, db: globals.db ?? join(dir, 'perfmine.db'), out: globals.out ?? join(dir, 'out'), llm: globals.llm ?? 'none' };
  print(`running: perfmine run --month ${DEMO_MONTH} --source git:${repoPath} --repo ${DEMO_REPO} --llm ${demoGlobals.llm} --db ${demoGlobals.db}\n`);
  const code = await runCommand('run', undefined, { month: DEMO_MONTH, source: `git:${repoPath}`, repo: [DEMO_REPO] }, demoGlobals, registry);
  print('\nfunnel so far (perfmine status):');
  statusCommand({ month: DEMO_MONTH }, { ...demoGlobals, json: false }, registry);
  return code;
}
