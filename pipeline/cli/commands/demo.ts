import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openStore } from '../../../cache/store.js';
import { lastStop } from '../../last-stop.js';
import { packagePath } from '../../package-root.js';
import { monthWindow } from '../../window.js';
import { prepareDemoDir } from '../demo-dir.js';
import { dockerSetupDeps, ensureDockerEngine } from '../demo-docker.js';
import { loadConfig } from '../../config/load.js';
import { createSampleRepo } from '../../demo/sample-repo.js';
import { SAMPLE_DEPENDENCY, sampleReleases, writeSampleIndex } from '../../demo/sample-index.js';
import { startLocalIndex } from '../../services/package-index/local-index.js';
import type { Registry } from '../../registry.js';
import { DockerService } from '../../services/docker.js';
import { flagLayer, print, type GlobalFlags } from '../session.js';
import { runCommand } from './run.js';
import { statusCommand } from './status.js';
import { emittedTasks } from '../../report/tasks.js';
import { tasksCommand } from './tasks.js';
import { WHEELS_CHECK_FILE } from '../../concepts/vendored-wheels.js';

export interface DemoFlags {
  readonly dir: string;
  readonly fresh?: boolean;
}

export const DEMO_MONTH = '2025-04';
export const DEMO_REPO = 'demo/fastmath';
const SCRIPTS = packagePath('scripts');

/** Why a demo run stopped, when it is this machine's limit rather than a fault: what to say. */
const MACHINE_LIMITS: Readonly<Record<string, string>> = {
  'docker-unreachable':
    "No Docker engine answers, so no environment can be built and nothing measured. Start one with `sudo scripts/setup-docker.sh` (installs Debian's docker.io and starts dockerd) and run `npx perfmine demo` again: finished stages are not run twice.",
  'no-base-image':
    'The base image is missing and could not be built. Build it with `sudo scripts/build-base-image.sh` (Debian packages only, no Docker Hub) and run the demo again.',
  'no-python-in-image':
    'The base image has no python3, so nothing can be measured. Build the local one with `sudo scripts/build-base-image.sh` (Debian packages, Python 3.11) and run the demo again without --base-image.',
  'no-asv-in-image':
    "validate.engine is asv, and the base image has no asv: it is built from Debian packages, and asv comes only from PyPI, which this machine cannot reach. The default engine, perfmine's own harness, needs no asv: remove validate.engine from perfmine.config.json and run the demo again. To use asv on a host with PyPI: `docker build -f scripts/base-pypi.Dockerfile -t perfmine/base:bookworm-asv scripts/` then `npx perfmine demo --base-image perfmine/base:bookworm-asv`. Air-gapped: download asv's wheels elsewhere (`pip download asv -d DIR`) and set `synthesize.asv.wheelhouse` to DIR in perfmine.config.json.",
};

/**
 * The README's first command: creates `fastmath`, a small Python library with asv benchmarks and
 * a month of pull requests (merge and squash commits), builds the local base image when it is
 * missing, then runs the whole pipeline over it with the git source, no LLM, a local database and
 * the local Docker engine (measuring with perfmine's own harness: no asv needed), and prints the
 * funnel and the emitted tasks with their folders. Where this machine cannot go on (no Docker
 * engine, no Python in the base image), it says exactly that and what to do.
 */
export async function demoCommand(flags: DemoFlags, globals: GlobalFlags, registry: Registry): Promise<number> {
  const dir = resolve(flags.dir);
  const removed = prepareDemoDir(dir, flags.fresh ?? false);
  if (removed.length > 0) print(`--fresh: removed the demo's own ${removed.join(', ')} from ${dir}`);
  const repoPath = join(dir, 'fastmath');
  const indexDir = join(dir, 'index');
  if (!existsSync(join(indexDir, 'index.json'))) writeSampleIndex(indexDir, DEMO_MONTH);
  if (!existsSync(repoPath)) {
    const sample = createSampleRepo(repoPath, DEMO_MONTH, { dependency: SAMPLE_DEPENDENCY });
    print(`created the sample repository ${repoPath}: ${sample.pullRequests.length} pull requests merged in ${DEMO_MONTH}`);
    for (const pr of sample.pullRequests) print(`  #${pr.number} (${pr.style}) ${pr.title}`);
  } else {
    print(`using the sample repository ${repoPath} (--fresh starts over)`);
  }
  const db = resolve(globals.db ?? join(dir, 'perfmine.db'));
  const out = resolve(globals.out ?? join(dir, 'out'));
  if (flags.fresh && (globals.db !== undefined || globals.out !== undefined)) {
    print(
      `--fresh leaves what --db/--out name outside ${dir} as it is: ${[globals.db !== undefined ? db : null, globals.out !== undefined ? out : null].filter(Boolean).join(', ')}`,
    );
  }
  const demoGlobals: GlobalFlags = { ...globals, db, out, llm: globals.llm ?? 'none' };
  await ensureEngineAndBaseImage(demoGlobals);

  // The sample depends on a generated package only this index has: the builds reach it through
  // the index time machine, as of each commit's date (PERFMINE_INDEX_UPSTREAM, for this run only).
  const index = await startLocalIndex({ dir: indexDir });
  const releases = sampleReleases(DEMO_MONTH)
    .map((r) => `${SAMPLE_DEPENDENCY} ${r.version} uploaded ${r.uploaded.slice(0, 10)}`)
    .join(', ');
  print(`\nserving the sample's package index ${indexDir} at ${index.url} (${releases})`);
  print(
    `\nrunning: PERFMINE_INDEX_UPSTREAM=${index.url} perfmine run --month ${DEMO_MONTH} --source git:${repoPath} --repo ${DEMO_REPO} --llm ${demoGlobals.llm} --db ${db} --out ${out}\n`,
  );
  const saved = process.env['PERFMINE_INDEX_UPSTREAM'];
  process.env['PERFMINE_INDEX_UPSTREAM'] = index.url;
  let code: number;
  try {
    code = await runCommand('run', undefined, { month: DEMO_MONTH, source: `git:${repoPath}`, repo: [DEMO_REPO] }, demoGlobals, registry);
  } finally {
    if (saved === undefined) delete process.env['PERFMINE_INDEX_UPSTREAM'];
    else process.env['PERFMINE_INDEX_UPSTREAM'] = saved;
    await index.close();
  }

  const store = openStore(db, { readonly: true });
  const stop = lastStop(store, DEMO_MONTH);
  store.close();
  const limit = stop ? MACHINE_LIMITS[stop.reason] : undefined;
  if (stop && limit) print(`\nThe demo stopped at ${stop.stage}, at a limit of this machine, not a fault of the pipeline.\n${limit}`);

  // The follow-up commands name the demo's own database and datasets, so that they show the demo's data.
  const dbFlags = `--db ${quote(db)}`;
  print(`\nfunnel for ${DEMO_MONTH} (perfmine status --month ${DEMO_MONTH} ${dbFlags}):`);
  statusCommand({ month: DEMO_MONTH }, { ...demoGlobals, json: false });
  print(`\nemitted tasks (perfmine tasks --month ${DEMO_MONTH} ${dbFlags} --out ${quote(out)}):`);
  tasksCommand({ month: DEMO_MONTH }, { ...demoGlobals, json: false });
  print(`\n${nextSteps({ db, out, dir, code, stopped: stop !== null })}`);
  // The demo's exit code is its run's, as recorded (perfmine status shows the same).
  return code;
}

/** A task folder that builds with no package index: it carries the files its lock names, or locks none from an index. */
export function selfContained(folder: string): boolean {
  return existsSync(join(folder, WHEELS_CHECK_FILE)) || !['requirements.lock', 'constraints.txt'].some((f) => existsSync(join(folder, f)));
}

/**
 * The demo's replay command for its month: with `--index dir:` its own index only when a folder
 * needs one (the demo's tasks lock a package only that index has; their folders carry its files,
 * emit.vendorWheels, unless that is `never`).
 */
export function replayStep(options: { out: string; dir: string; db: string; folders: readonly string[] }): string {
  const index = options.folders.every(selfContained) ? '' : ` --index dir:${quote(join(options.dir, 'index'))}`;
  return `  perfmine replay ${quote(join(options.out, DEMO_MONTH))} --db ${quote(options.db)}${index}   each task rebuilt from its folder and measured again, before publishing`;
}

/** Shell-quotes a path when it needs it. */
function quote(path: string): string {
  return /^[\w./:@%+=,-]+$/.test(path) ? path : `'${path.replace(/'/g, "'\\''")}'`;
}

/** The demo's last lines: where the tasks are, and the commands that show the demo's data. */
function nextSteps(options: { db: string; out: string; dir: string; code: number; stopped: boolean }): string {
  const store = openStore(options.db, { readonly: true });
  let folders: string[];
  try {
    folders = emittedTasks(store, monthWindow(DEMO_MONTH), options.out)
      .filter((t) => t.written)
      .map((t) => t.folder);
  } finally {
    store.close();
  }
  const db = `--db ${quote(options.db)}`;
  const lines: string[] = [];
  if (folders.length > 0) {
    lines.push(
      `${folders.length} task${folders.length === 1 ? '' : 's'} emitted; each folder holds the task (problem statement, Dockerfile, expert patch, workloads):`,
    );
    for (const f of folders) lines.push(`  ${f}`);
    lines.push(`the month's dataset: ${join(options.out, DEMO_MONTH)} (tasks.jsonl, tasks.parquet, manifest.json)`);
  } else {
    lines.push(`no task emitted${options.stopped ? ': the run stopped before the end (see above)' : ''}.`);
  }
  lines.push('next:');
  if (options.stopped) lines.push(`  perfmine doctor --llm none ${db}   what this machine lacks, each with its fix`);
  lines.push(
    // report's --out names the page; the datasets it links to are PERFMINE_OUT's.
    `  PERFMINE_OUT=${quote(options.out)} perfmine report --month ${DEMO_MONTH} ${db} --out ${quote(join(options.dir, `report-${DEMO_MONTH}.html`))}   one page: funnel, speedups, tasks`,
    `  perfmine status --month ${DEMO_MONTH} ${db} --stage validate --items   each candidate's verdict and reason`,
  );
  if (folders.length > 0) lines.push(replayStep({ out: options.out, dir: options.dir, db: options.db, folders }));
  if (options.code !== 0)
    lines.push(`  npx perfmine demo --dir ${quote(options.dir)}   again once the above is fixed (finished stages are not run twice)`);
  lines.push(
    `(exit ${options.code}: ${options.code === 0 ? 'the demo ran to its end' : options.code === 1 ? 'some items failed; they are recorded' : options.code === 2 ? 'the run stopped at something this machine or configuration must fix' : 'see perfmine --help'})`,
  );
  return lines.join('\n');
}

/**
 * Makes the Docker engine answer when it can (demo-docker.ts: as root, with the project's own
 * script), then builds perfmine/base:bookworm when it is the configured base image and the engine
 * lacks it.
 */
async function ensureEngineAndBaseImage(globals: GlobalFlags): Promise<void> {
  const { config } = loadConfig({ configPath: globals.config, flags: flagLayer(globals) });
  const docker = new DockerService();
  if (!(await ensureDockerEngine(dockerSetupDeps(docker, print)))) return;
  if (await docker.imageExists(config.docker.baseImage)) return;
  if (config.docker.baseImage !== 'perfmine/base:bookworm') {
    print(`\nthe base image ${config.docker.baseImage} is not in the Docker engine; synthesize will say what to do`);
    return;
  }
  print(
    '\nthe base image perfmine/base:bookworm is missing: building it from Debian packages (scripts/build-base-image.sh, a few minutes)',
  );
  const built = spawnSync('bash', [join(SCRIPTS, 'build-base-image.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.status !== 0) print('building the base image failed (it needs root and debootstrap: sudo scripts/setup-docker.sh installs it)');
}
