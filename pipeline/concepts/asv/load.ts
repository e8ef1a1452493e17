import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ItemError } from '../../errors.js';
import { parseBenchmarksFile, type BenchmarkInfo } from './benchmarks.js';
import { resultSetOf, type ResultSet } from './result-set.js';
import { parseResultsFile, type ResultsFile } from './results.js';

/** The thin IO shell around the parsers: reading asv files from disk. */

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : String(error);
    throw new ItemError('asv-file-unreadable', `${path}: cannot read: ${why}`, { cause: error });
  }
}

/** Reads and parses an asv results file. */
export async function readResultsFile(path: string): Promise<ResultsFile> {
  return parseResultsFile(await readText(path), path);
}

/** Reads and parses an asv benchmarks.json. */
export async function readBenchmarksFile(path: string): Promise<ReadonlyMap<string, BenchmarkInfo>> {
  return parseBenchmarksFile(await readText(path), path);
}

/** Files in an asv results directory that are not results files. */
const NOT_RESULTS = new Set(['benchmarks.json', 'machine.json']);

/** When an invocation ran: the earliest `started_at` of its benchmarks (ms), or null. */
export function invocationStart(file: ResultsFile): number | null {
  let first: number | null = null;
  for (const b of file.benchmarks) {
    if (b.startedAt !== null && Number.isFinite(b.startedAt) && (first === null || b.startedAt < first)) first = b.startedAt;
  }
  return first;
}

/**
 * Per-invocation files in time order: by the earliest `started_at` inside each file (when the
 * invocation ran), then by `date` (asv's commit date, equal for invocations of one commit), then
 * by file name. A file without either sorts after those that have it. Never by file mtime, which
 * copying changes.
 */
export function orderInvocations(files: readonly ResultsFile[]): ResultsFile[] {
  const key = (n: number | null) => (n === null ? Number.POSITIVE_INFINITY : n);
  return [...files].sort(
    (a, b) =>
      key(invocationStart(a)) - key(invocationStart(b)) ||
      key(a.date) - key(b.date) ||
      (basename(a.source) < basename(b.source) ? -1 : basename(a.source) > basename(b.source) ? 1 : 0),
  );
}

/** The results files of a directory (every `*.json` except benchmarks.json and machine.json), parsed and in time order. */
export async function readResultsDirectory(dir: string): Promise<ResultsFile[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    throw new ItemError('asv-file-unreadable', `${dir}: cannot list the directory: ${String(error)}`, { cause: error });
  }
  const paths = names
    .filter((n) => n.endsWith('.json') && !NOT_RESULTS.has(n))
    .sort()
    .map((n) => join(dir, n));
  if (paths.length === 0) throw new ItemError('asv-file-unreadable', `${dir}: no results files (*.json) in the directory`);
  return orderInvocations(await Promise.all(paths.map(readResultsFile)));
}

/**
 * Loads one side of a comparison as its per-invocation result sets: a results file gives one
 * set; a directory of per-invocation results files gives one set per file, in time order
 * ({@link orderInvocations}).
 */
export async function loadSide(path: string): Promise<ResultSet[]> {
  let isDir = false;
  try {
    isDir = (await stat(path)).isDirectory();
  } catch {
    // not there: readResultsFile says so
  }
  if (isDir) return (await readResultsDirectory(path)).map(resultSetOf);
  return [resultSetOf(await readResultsFile(path))];
}

/**
 * Where benchmarks.json may sit for these results files or directories (a path ending in `/`):
 * beside each file (or inside each directory), then one directory up (asv's layout is
 * `results/<machine>/<file>.json` with `results/benchmarks.json`).
 */
export function benchmarksFileCandidates(resultPaths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of resultPaths) {
    const dir = p.endsWith('/') ? resolve(p) : dirname(resolve(p));
    for (const candidate of [join(dir, 'benchmarks.json'), join(dirname(dir), 'benchmarks.json')]) {
      if (!out.includes(candidate)) out.push(candidate);
    }
  }
  return out;
}

/** The first existing benchmarks.json among the candidates, or null. */
export async function findBenchmarksFile(resultPaths: readonly string[]): Promise<string | null> {
  for (const candidate of benchmarksFileCandidates(resultPaths)) {
    try {
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // not there: try the next place
    }
  }
  return null;
}
