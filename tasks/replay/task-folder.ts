import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { ItemError } from '../../pipeline/errors.js';
import { folderDigest, REPLAYS_DIR } from '../../pipeline/concepts/replay-files.js';
import type { TarEntry } from '../../pipeline/services/tar.js';
import type { RecordedWorkload } from './rule.js';

/**
 * A task folder as a replay reads it, from the folder alone (no store): what the task is
 * (metadata.json), what validate recorded per workload (workloads.json), how it measured
 * (`perfmine/bench/task.json`: asv config, interpreter, protocol), the Dockerfile and the expert
 * patch; every file with its mode, for the build context; and the folder's digest. Anything
 * missing or malformed is an ItemError naming the file.
 */

const metadataSchema = z.object({
  instance_id: z.string(),
  repo: z.string(),
  pull_number: z.number().int().positive(),
  base_commit: z.string(),
  month: z.string().nullable().optional(),
  environment: z.object({ base_image: z.string(), python_version: z.string().nullable().optional() }),
  measurement: z.object({ engine: z.string(), protocol: z.record(z.string(), z.unknown()).nullable().optional() }),
  /** A published folder's images (`publish --registry`): each base the Dockerfile started from, by its digest reference. */
  images: z.object({ environment: z.string(), bases: z.record(z.string(), z.string()) }).optional(),
});

const workloadsSchema = z.array(
  z.object({
    name: z.string(),
    perfmine_verdict: z.object({
      change: z.string(),
      normalized_median: z.number().nullable(),
      noise: z.number().nullable(),
      usable_pairs: z.number().int().nonnegative(),
      minimum_detectable_speedup: z.number().nullable(),
    }),
  }),
);

const taskJsonSchema = z.object({
  asv_config: z.string(),
  python: z.string().nullable().optional(),
  protocol: z.record(z.string(), z.unknown()).optional(),
});

export interface FolderFile {
  /** Path relative to the folder, with `/`. */
  readonly path: string;
  readonly absolute: string;
  readonly mode: number;
  readonly sha256: string;
}

export interface TaskFolder {
  readonly dir: string;
  readonly instanceId: string;
  readonly repo: string;
  readonly pullNumber: number;
  readonly month: string | null;
  readonly baseCommit: string;
  /**
   * The image the Dockerfile starts from (metadata.json environment.base_image; in a published
   * folder, that image by digest in its registry): what the outside scan compares with.
   */
  readonly baseImage: string;
  readonly engine: string;
  /** The recorded protocol (task.json's, else metadata.json's). */
  readonly protocol: Readonly<Record<string, unknown>>;
  readonly asvConfig: string;
  /** The interpreter validate measured with (`python3.11`). */
  readonly python: string;
  readonly workloads: readonly RecordedWorkload[];
  readonly dockerfile: string;
  readonly expertPatch: string;
  /** Every file but replays/, sorted by path. */
  readonly files: readonly FolderFile[];
  readonly digest: string;
}

function readJson<T>(dir: string, name: string, schema: z.ZodType<T>): T {
  const path = join(dir, name);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ItemError('task-folder-unreadable', `${path}: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ItemError('task-folder-unreadable', `${path}: ${issue.path.join('.') || '(top)'}: ${issue.message}`);
  }
  return parsed.data;
}

function readText(dir: string, name: string): string {
  try {
    return readFileSync(join(dir, name), 'utf8');
  } catch (error) {
    throw new ItemError('task-folder-unreadable', `${join(dir, name)}: ${(error as Error).message}`);
  }
}

/** Every regular file under the folder but replays/ (symbolic links and other kinds are left out). */
function listFiles(dir: string): FolderFile[] {
  const out: FolderFile[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const absolute = join(entry.parentPath, entry.name);
    const path = relative(dir, absolute).split('\\').join('/');
    if (path === REPLAYS_DIR || path.startsWith(`${REPLAYS_DIR}/`)) continue;
    const mode = lstatSync(absolute).mode & 0o777;
    out.push({ path, absolute, mode, sha256: createHash('sha256').update(readFileSync(absolute)).digest('hex') });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** Whether a directory is a task folder (it has metadata.json and a Dockerfile). */
export function isTaskFolder(dir: string): boolean {
  return existsSync(join(dir, 'metadata.json')) && existsSync(join(dir, 'Dockerfile'));
}

/** The task folders a path names: itself when it is one, else its subdirectories that are (a month directory). */
export function taskFoldersOf(path: string): string[] {
  const dir = resolve(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  if (isTaskFolder(dir)) return [dir];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => join(dir, e.name))
    .filter(isTaskFolder)
    .sort();
}

export function readTaskFolder(path: string): TaskFolder {
  const dir = resolve(path);
  const metadata = readJson(dir, 'metadata.json', metadataSchema);
  const recorded = readJson(dir, 'workloads.json', workloadsSchema);
  const task = existsSync(join(dir, 'perfmine', 'bench', 'task.json')) ? readJson(dir, 'perfmine/bench/task.json', taskJsonSchema) : null;
  if (!task)
    throw new ItemError(
      'task-folder-unreadable',
      `${dir}: no perfmine/bench/task.json (a folder emitted before issue 28 cannot be replayed)`,
    );
  const files = listFiles(dir);
  const pythonVersion = metadata.environment.python_version ?? null;
  return {
    dir,
    instanceId: metadata.instance_id,
    repo: metadata.repo,
    pullNumber: metadata.pull_number,
    month: metadata.month ?? null,
    baseCommit: metadata.base_commit,
    baseImage: metadata.images?.bases[metadata.environment.base_image] ?? metadata.environment.base_image,
    engine: metadata.measurement.engine,
    protocol: task.protocol ?? metadata.measurement.protocol ?? {},
    asvConfig: task.asv_config,
    python: task.python ?? (pythonVersion ? `python${pythonVersion}` : 'python3'),
    workloads: recorded.map((w) => ({
      name: w.name,
      change: w.perfmine_verdict.change,
      normalizedMedian: w.perfmine_verdict.normalized_median,
      noise: w.perfmine_verdict.noise,
      usablePairs: w.perfmine_verdict.usable_pairs,
      mds: w.perfmine_verdict.minimum_detectable_speedup,
    })),
    dockerfile: readText(dir, 'Dockerfile'),
    expertPatch: readText(dir, 'expert.patch'),
    files,
    digest: folderDigest(files.map((f) => [f.path, f.sha256] as const)),
  };
}

/** The build context: every file of the folder (streamed from disk) with its mode, the Dockerfile given. */
export function buildContext(folder: TaskFolder, dockerfile: string, extra: readonly TarEntry[] = []): TarEntry[] {
  return [
    ...folder.files
      .filter((f) => f.path !== 'Dockerfile')
      .map((f): TarEntry => ({ name: f.path, content: { file: f.absolute }, mode: f.mode })),
    ...extra,
    { name: 'Dockerfile', content: dockerfile },
  ];
}
