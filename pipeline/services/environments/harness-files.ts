import { readFileSync } from 'node:fs';
import { packagePath } from '../../package-root.js';
import type { TarEntry } from '../tar.js';
import { BENCH_FEATURES } from '../../../tasks/folder/index.js';

/**
 * perfmine's Python helpers (Python 3.8+ standard library only) and where they go in a container:
 * the measurement harness (perfmine_harness.py; its protocol is documented in its module
 * docstring) and the snapshot helper (perfmine_snapshot.py: benchmark return values recorded on
 * the base and compared on the expert), which reads the asv config through the harness beside it.
 */

/** The harness on this host. */
export const HARNESS_SCRIPT = packagePath('python', 'perfmine_harness.py');

/** The snapshot helper on this host. */
export const SNAPSHOT_SCRIPT = packagePath('python', 'perfmine_snapshot.py');

/** Every file of the helpers on this host: each container gets both. */
export const HARNESS_FILES: readonly string[] = [HARNESS_SCRIPT, SNAPSHOT_SCRIPT];

/** Where the harness lives in a container: run it as `python3 ${HARNESS_CONTAINER_PATH} …`. */
export const HARNESS_CONTAINER_DIR = '/perfmine/harness';
export const HARNESS_CONTAINER_PATH = `${HARNESS_CONTAINER_DIR}/perfmine_harness.py`;
export const SNAPSHOT_CONTAINER_PATH = `${HARNESS_CONTAINER_DIR}/perfmine_snapshot.py`;

/** The helpers as tar entries under `perfmine/harness/`, to extract at the container's root. */
export function harnessTarEntries(): TarEntry[] {
  return HARNESS_FILES.map((file) => ({
    name: `${HARNESS_CONTAINER_DIR.slice(1)}/${file.slice(file.lastIndexOf('/') + 1)}`,
    content: readFileSync(file),
    mode: 0o755,
  }));
}

/**
 * perfmine-bench, the measuring tool every task image carries (perfmine_bench.py; its docstring is
 * its manual): `list`, `run` and `compare` of the repository's asv workloads with the harness,
 * which it imports from its own directory, so the harness is installed beside it.
 */
export const BENCH_SCRIPT = packagePath('python', 'perfmine_bench.py');

/** The tool and its helpers on this host: the verdict, the interleaved driver, asv's formatting. */
export const BENCH_SCRIPTS: readonly string[] = [
  BENCH_SCRIPT,
  ...['perfmine_bench_stats.py', 'perfmine_bench_interleave.py', 'perfmine_bench_format.py', 'perfmine_bench_account.py'].map((name) =>
    packagePath('python', name),
  ),
];

export const BENCH_CONTAINER_DIR = '/perfmine/bench';
export const BENCH_CONTAINER_PATH = `${BENCH_CONTAINER_DIR}/perfmine_bench.py`;
/** The command on the image's PATH. */
export const BENCH_COMMAND_PATH = '/usr/local/bin/perfmine-bench';
/** The command: the tool run by the image's interpreter (PERFMINE_PYTHON when the image names one). */
export const BENCH_WRAPPER = `#!/bin/sh\nexec "\${PERFMINE_PYTHON:-python3}" ${BENCH_CONTAINER_PATH} "$@"\n`;

/** What the tool reads from /perfmine/bench/task.json (every value can be overridden by a flag). */
export interface BenchTask {
  /** The base commit `compare` builds the base side from. */
  readonly baseCommit: string;
  /** The asv config, relative to /repo. */
  readonly asvConfig: string;
  /** The task's build script (default /perfmine/docker_build.sh). */
  readonly buildScript?: string;
  /** The working tree's interpreter (`python3.11`); null: PERFMINE_PYTHON, else python3. */
  readonly python?: string | null;
  /**
   * Measurement protocol: validate.harness's keys (rounds, samples, roundsPerProcess, clock, cpus,
   * warmupSeconds, batchTimeoutSeconds, hashSeed, seed, adaptive), timeBudgetSeconds, env, and
   * paired (validate.paired's keys).
   */
  readonly protocol?: Readonly<Record<string, unknown>>;
}

/** task.json as the tool reads it. */
export function benchTaskJson(task: BenchTask): string {
  return `${JSON.stringify(
    {
      base_commit: task.baseCommit,
      asv_config: task.asvConfig,
      build_script: task.buildScript ?? '/perfmine/docker_build.sh',
      python: task.python ?? null,
      protocol: task.protocol ?? {},
      features: BENCH_FEATURES,
    },
    null,
    2,
  )}\n`;
}

/**
 * The tool as tar entries to extract at an image's root: its files and the harness under
 * perfmine/bench/, the command at usr/local/bin/perfmine-bench, and task.json when given.
 */
export function benchTarEntries(task?: BenchTask): TarEntry[] {
  const files = [...BENCH_SCRIPTS, HARNESS_SCRIPT].map((file) => ({
    name: `${BENCH_CONTAINER_DIR.slice(1)}/${file.slice(file.lastIndexOf('/') + 1)}`,
    content: readFileSync(file),
    mode: 0o755,
  }));
  const command = { name: BENCH_COMMAND_PATH.slice(1), content: BENCH_WRAPPER, mode: 0o755 };
  return task
    ? [...files, command, { name: `${BENCH_CONTAINER_DIR.slice(1)}/task.json`, content: benchTaskJson(task) }]
    : [...files, command];
}
