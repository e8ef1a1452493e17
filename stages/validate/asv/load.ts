import { readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ItemError } from '../../../pipeline/errors.js';
import { parseBenchmarksFile, type BenchmarkInfo } from './benchmarks.js';
import { resultSetOf, type ResultSet } from './result-set.js';
import { parseResultsFile, type ResultsFile } from './results.js';

/** The thin IO shell around the parsers: reading asv files from disk. */

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : String(error);
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

/**
 * Loads one side of a comparison as its per-invocation result sets. Today a side is one
 * results file (one set); a directory of per-invocation files would give one set per file.
 */
export async function loadSide(path: string): Promise<ResultSet[]> {
  return [resultSetOf(await readResultsFile(path))];
}

/**
 * Where benchmarks.json may sit for these results files: beside each file, then one directory up
 * (asv's layout is `results/<machine>/<file>.json` with `results/benchmarks.json`).
 */
export function benchmarksFileCandidates(resultPaths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of resultPaths) {
    const dir = dirname(resolve(p));
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
