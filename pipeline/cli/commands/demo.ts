import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { recentRuns } from '../../../cache/runs.js';
import { openStore } from '../../../cache/store.js';
import { loadConfig } from '../../config/load.js';
import { createSampleRepo } from '../../demo/sample-repo.js';
import type { Registry } from '../../registry.js';
import { DockerService } from '../../services/docker.js';
import { flagLayer, print, type GlobalFlags } from '../session.js';
import { runCommand } from './run.js';
import { statusCommand } from './status.js';
import { tasksCommand } from './tasks.js';

interface DemoFlags {
  readonly dir: string;
  readonly fresh?: boolean;
}

export const DEMO_MONTH = '2025-04';
export const DEMO_REPO = 'demo/fastmath';
const SCRIPTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'scripts');

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

/** Why a demo run stopped, when it is this machine's limit rather than a fault: what to say. */
const MACHINE_LIMITS: Readonly<Record<string, string>> = {
  'docker-unreachable':
    'No Docker engine answers, so no environment can be built and nothing measured. Start one with `sudo scripts/setup-docker.sh` (installs Debian\'s docker.io and starts dockerd) and run `npx perfmine demo` again: finished stages are not run twice.',
  'no-base-image':
    'The base image is missing and could not be built. Build it with `sudo scripts/build-base-image.sh` (Debian packages only, no Docker Hub) and run the demo again.',
  'no-asv-in-image':
    'The base image has no asv: it is built from Debian packages, and asv comes only from PyPI, which this machine cannot reach. Environments cannot be verified and nothing can be measured, so no task is emitted here. On a host with PyPI: `docker build -f scripts/base-pypi.Dockerfile -t perfmine/base:bookworm-asv scripts/` then `npx perfmine demo --base-image perfmine/base:bookworm-asv`. Air-gapped: download asv\'s wheels elsewhere (`pip download asv -d DIR`) and set `synthesize.asv.wheelhouse` to DIR in perfmine.config.json.',
};

/**
 * The README's first command: creates `fastmath`, a small Python library with asv benchmarks and
 * a month of pull requests (merge and squash commits), builds the local base image when it is
 * missing, then runs the whole pipeline over it with the git source, no LLM, a local database and
 * the local Docker engine, and prints the funnel and the emitted tasks. Where this machine cannot
 * go on (no Docker engine, no asv in the image), it says exactly that and what to do.
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
  await ensureBaseImage(demoGlobals);

  print(`\nrunning: perfmine run --month ${DEMO_MONTH} --source git:${repoPath} --repo ${DEMO_REPO} --llm ${demoGlobals.llm} --db ${demoGlobals.db} --out ${demoGlobals.out}\n`);
  let code = await runCommand('run', undefined, { month: DEMO_MONTH, source: `git:${repoPath}`, repo: [DEMO_REPO] }, demoGlobals, registry);

  const db = openStore(demoGlobals.db!);
  const last = recentRuns(db, 1)[0];
  db.close();
  const stopped = last?.summary ? (JSON.parse(last.summary) as { stopped?: { reason: string; stage: string } | null }).stopped : null;
  const limit = stopped ? MACHINE_LIMITS[stopped.reason] : undefined;
  if (stopped && limit) {
    print(`\nThe demo stopped at ${stopped.stage}, at a limit of this machine, not a fault of the pipeline.\n${limit}`);
    code = 0;
  }

  print(`\nfunnel for ${DEMO_MONTH} (perfmine status --month ${DEMO_MONTH}):`);
  statusCommand({ month: DEMO_MONTH }, { ...demoGlobals, json: false }, registry);
  print(`\nemitted tasks (perfmine tasks --month ${DEMO_MONTH}):`);
  tasksCommand({ month: DEMO_MONTH }, { ...demoGlobals, json: false });
  return code;
}

/** Builds perfmine/base:bookworm when it is the configured base image and the engine lacks it. */
async function ensureBaseImage(globals: GlobalFlags): Promise<void> {
  const { config } = loadConfig({ configPath: globals.config, flags: flagLayer(globals) });
  const docker = new DockerService();
  try {
    await docker.ping();
  } catch {
    print('\nno Docker engine answers: the stages that need one will say so (scripts/setup-docker.sh starts one)');
    return;
  }
  if (await docker.imageExists(config.docker.baseImage)) return;
  if (config.docker.baseImage !== 'perfmine/base:bookworm') {
    print(`\nthe base image ${config.docker.baseImage} is not in the Docker engine; synthesize will say what to do`);
    return;
  }
  print('\nthe base image perfmine/base:bookworm is missing: building it from Debian packages (scripts/build-base-image.sh, a few minutes)');
  const built = spawnSync('bash', [join(SCRIPTS, 'build-base-image.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.status !== 0) print('building the base image failed (it needs root and debootstrap: sudo scripts/setup-docker.sh installs it)');
}
