import { readFileSync } from 'node:fs';
import { sha256 } from '../../hash.js';
import { packagePath } from '../../package-root.js';
import type { TarEntry } from '../tar.js';
import { benchTarEntries, type BenchTask } from './harness-files.js';
import { REPO_DIR } from './verification.js';
import { SEAL_SCRIPT } from './seal.js';

/**
 * The per-commit source tier: the toolchain, the repository at /repo sealed at the commit (only
 * the commit and its ancestors, seal.ts), perfmine's sealing script at /perfmine/seal.sh (the
 * build seals the modules a build script fetched with it), and the in-image measuring tool
 * (`perfmine-bench`, /perfmine/bench/). Every image an agent could be given or validate measures
 * is built on it; the repository tier (perfmine's own clone, which holds later history) is only
 * ever the first stage of its build and never a base of an image. Pure: Dockerfiles and files.
 */

/** Where the sealing script lives in every source tier and task image. */
export const SEAL_PATH = '/perfmine/seal.sh';
/** Where the lock's reader and checker lives (perfmine_lock.py: `read`, `check LOCK.json`). */
export const LOCK_READER_PATH = '/perfmine/perfmine_lock.py';
const LOCK_READER = packagePath('python', 'perfmine_lock.py');

/**
 * The files the source tier and a task folder's image add under / (tar paths, relative); a task
 * folder's also carry its facts for perfmine-bench (task.json: base commit, asv config, protocol).
 */
export function sourceTierFiles(task?: BenchTask): TarEntry[] {
  return [
    { name: SEAL_PATH.slice(1), content: SEAL_SCRIPT, mode: 0o755 },
    { name: LOCK_READER_PATH.slice(1), content: readFileSync(LOCK_READER), mode: 0o755 },
    ...benchTarEntries(task),
  ];
}

/** What the source tier is made of besides the commit and the toolchain: its tag changes with it. */
export function sourceTierKey(toolchainImageId: string, sha: string): string {
  const files = sourceTierFiles()
    .map((f) => `${f.name}:${sha256(typeof f.content === 'string' || Buffer.isBuffer(f.content) ? f.content : f.content.file)}`)
    .join('\n');
  return sha256(`${toolchainImageId}\n${sha}\n${files}`);
}

/** COPY lines that put perfmine's files of the context (sourceTierFiles) into an image. */
function perfmineFilesCopy(): string[] {
  const roots = [...new Set(sourceTierFiles().map((f) => f.name.split('/')[0]!))].sort();
  return roots.map((root) => `COPY ${root}/ /${root}/`);
}

/**
 * The source tier's Dockerfile: a first stage on the repository tier seals the commit into /repo
 * (fetching it first when a URL clone predates it), the image itself starts again from the
 * toolchain and copies only the sealed /repo.
 */
export function sourceTierDockerfile(input: { readonly repoImage: string; readonly toolchainImage: string; readonly sha: string }): string {
  return [
    `FROM ${input.repoImage} AS clone`,
    `COPY ${SEAL_PATH.slice(1)} /perfmine-seal.sh`,
    `RUN bash /perfmine-seal.sh from-clone ${input.sha}`,
    `FROM ${input.toolchainImage}`,
    `COPY --from=clone ${REPO_DIR} ${REPO_DIR}`,
    ...perfmineFilesCopy(),
    `WORKDIR ${REPO_DIR}`,
    '',
  ].join('\n');
}

/** Where a task folder keeps the sealed history: `source/repo.bundle` and `source/modules/NAME.bundle`. */
export const TASK_SOURCE_DIR = 'source';

/**
 * The first lines of a task folder's Dockerfile: its `source/repo.bundle` (and modules) sealed into
 * /repo in a stage of its own, so that the bundle never becomes a layer of the image, then the
 * image from the base image with the sealed /repo and perfmine's files (as the source tier).
 */
export function taskSourceDockerfileLines(input: { readonly baseImage: string; readonly sha: string }): string[] {
  return [
    `FROM ${input.baseImage} AS source`,
    `COPY ${TASK_SOURCE_DIR}/ /perfmine-source/`,
    `COPY ${SEAL_PATH.slice(1)} /perfmine-source/seal.sh`,
    `RUN bash /perfmine-source/seal.sh from-bundle /perfmine-source/repo.bundle ${input.sha}`,
    `FROM ${input.baseImage}`,
    `COPY --from=source ${REPO_DIR} ${REPO_DIR}`,
    ...perfmineFilesCopy(),
  ];
}
