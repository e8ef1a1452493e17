import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { z } from 'zod';
import { ItemError } from '../../pipeline/errors.js';
import { REPLAYS_DIR } from '../../pipeline/concepts/replay-files.js';
import {
  BENCH_FEATURES,
  BENCH_TASK_FILE,
  benchTaskSchema,
  metadataSchema,
  TASK_FORMAT,
  workloadsSchema,
  type BenchFeature,
  type BenchTaskFile,
  type TaskMetadata,
  type TaskWorkload,
} from './schema.js';

/**
 * The one reader of a task folder: from disk (a written folder) or from memory (an emitted task
 * as the store holds it), the same checks and the same answer. Anything missing or malformed is
 * a TaskFolderError (an item error: the caller leaves the task out, or, where the user named the
 * folder, stops with it as a user error) naming the file, the field and what to do.
 */

/** A task folder that cannot be read: which file, what is wrong, and what to do. */
export class TaskFolderError extends ItemError {
  /** The folder's file at fault (`metadata.json`), or null for the folder as a whole. */
  readonly file: string | null;
  constructor(label: string, file: string | null, problem: string, fix?: string) {
    super('task-folder-unreadable', `${label}${file ? `/${file}` : ''}: ${problem}`, {
      fix: fix ?? 'write the folder again (`perfmine stage emit --force --month YYYY-MM`), or leave it out',
    });
    this.file = file;
  }
}

/** A regular file of a folder on disk: its path and mode. */
export interface ListedFile {
  /** Path relative to the folder, with `/`. */
  readonly path: string;
  readonly absolute: string;
  readonly mode: number;
}

/** A listed file with its SHA-256 (what a folder's digest is made of). */
export interface FolderFile extends ListedFile {
  readonly sha256: string;
}

/** Where a folder's files are read from. */
export interface FolderSource {
  /** How errors name the folder (its path, or the instance id). */
  readonly label: string;
  /** A text file's content, or undefined when the folder has no such file. */
  text(path: string): string | undefined;
  /** Every file's path (texts and binary files; replays/ left out). */
  readonly paths: readonly string[];
}

/** Every regular file under a folder but replays/ (symbolic links and other kinds are left out), sorted; nothing is read. */
export function listFolderFiles(dir: string): ListedFile[] {
  const out: ListedFile[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const absolute = join(entry.parentPath, entry.name);
    const path = relative(dir, absolute).split('\\').join('/');
    if (path === REPLAYS_DIR || path.startsWith(`${REPLAYS_DIR}/`)) continue;
    out.push({ path, absolute, mode: lstatSync(absolute).mode & 0o777 });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** The files with their SHA-256, read whole (the sealed history's bundles included): only for what needs the digest. */
export function hashedFiles(files: readonly ListedFile[]): FolderFile[] {
  return files.map((f) => ({ ...f, sha256: createHash('sha256').update(readFileSync(f.absolute)).digest('hex') }));
}

/** A folder on disk, its files listed once (paths and modes; a file is read only when asked for). */
export function diskSource(path: string): FolderSource & { readonly dir: string; readonly files: readonly ListedFile[] } {
  const dir = resolve(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new TaskFolderError(dir, null, 'not a directory');
  const files = listFolderFiles(dir);
  const present = new Set(files.map((f) => f.path));
  return {
    label: dir,
    dir,
    files,
    paths: files.map((f) => f.path),
    text: (p) => {
      if (!present.has(p)) return undefined;
      try {
        return readFileSync(join(dir, p), 'utf8');
      } catch (error) {
        throw new TaskFolderError(dir, p, (error as Error).message);
      }
    },
  };
}

/** An emitted task as the store holds it: its text files and the paths of its binary files. */
export function memorySource(label: string, files: Readonly<Record<string, string>>, binaryPaths: readonly string[]): FolderSource {
  return {
    label,
    paths: [...new Set([...Object.keys(files), ...binaryPaths])].sort(),
    text: (p) => files[p],
  };
}

/** A task folder as read: its format, its parsed JSON files, and its texts. */
export interface TaskFolderContents {
  readonly label: string;
  readonly format: number;
  readonly metadata: TaskMetadata;
  readonly workloads: readonly TaskWorkload[];
  /** perfmine-bench's task.json; null in a folder emitted before it existed (read, but not replayable). */
  readonly bench: BenchTaskFile | null;
  /** What the folder's perfmine-bench can do (task.json `features`; format 1: what its perfmine_bench.py offers). */
  readonly features: readonly BenchFeature[];
  readonly dockerfile: string;
  readonly buildScript: string;
  readonly expertPatch: string;
  /** Every file's path, sorted. */
  readonly paths: readonly string[];
}

function parseJson<T>(source: FolderSource, file: string, schema: z.ZodType<T>): T {
  const text = source.text(file);
  if (text === undefined) throw new TaskFolderError(source.label, file, 'missing');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new TaskFolderError(source.label, file, `not JSON (${(error as Error).message})`);
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new TaskFolderError(source.label, file, `${issue.path.join('.') || '(top level)'}: ${issue.message}`);
  }
  return parsed.data;
}

function requiredText(source: FolderSource, file: string): string {
  const text = source.text(file);
  if (text === undefined) throw new TaskFolderError(source.label, file, 'missing');
  if (text.trim() === '') throw new TaskFolderError(source.label, file, 'empty');
  return text;
}

/** Format 1 recorded no features: the one it can have is read from its perfmine-bench's usage (the only text search left, for old folders). */
function formatOneFeatures(source: FolderSource): BenchFeature[] {
  return (source.text('perfmine/bench/perfmine_bench.py') ?? '').includes('--rebuild-working') ? ['rebuild-working'] : [];
}

/** Reads and checks a task folder's files (metadata.json first: it names the folder's format). */
export function readTaskFolderContents(source: FolderSource): TaskFolderContents {
  const metadata = parseJson(source, 'metadata.json', metadataSchema);
  const format = metadata.task_format ?? 1;
  if (format > TASK_FORMAT)
    throw new TaskFolderError(
      source.label,
      'metadata.json',
      `task format ${format}, written by a newer perfmine (this one reads formats 1 to ${TASK_FORMAT})`,
      'upgrade perfmine to read it',
    );
  const workloads = parseJson(source, 'workloads.json', workloadsSchema);
  const bench = source.text(BENCH_TASK_FILE) === undefined ? null : parseJson(source, BENCH_TASK_FILE, benchTaskSchema);
  if (bench && bench.base_commit !== metadata.base_commit)
    throw new TaskFolderError(
      source.label,
      BENCH_TASK_FILE,
      `base_commit ${bench.base_commit} is not metadata.json's ${metadata.base_commit}`,
    );
  const known = new Set<string>(BENCH_FEATURES);
  const features = format === 1 ? formatOneFeatures(source) : (bench?.features ?? []).filter((f): f is BenchFeature => known.has(f));
  return {
    label: source.label,
    format,
    metadata,
    workloads,
    bench,
    features,
    dockerfile: requiredText(source, 'Dockerfile'),
    buildScript: requiredText(source, 'docker_build.sh'),
    expertPatch: requiredText(source, 'expert.patch'),
    paths: source.paths,
  };
}

/** task.json, which replays, scores and exports need: a TaskFolderError naming the folder's format when it has none. */
export function benchTaskOf(folder: TaskFolderContents): BenchTaskFile {
  if (folder.bench) return folder.bench;
  throw new TaskFolderError(
    folder.label,
    BENCH_TASK_FILE,
    `missing (task format ${folder.format}, emitted before perfmine-bench's task.json existed): it cannot be measured`,
  );
}

/** Whether a directory looks like a task folder (it has metadata.json and a Dockerfile). */
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
