import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tasksParquet } from './parquet.js';
import { sortRows, toJsonl, type TaskRow } from './row.js';
import type { BlobRef } from '../../cache/blobs.js';
import type { FileContent } from '../../pipeline/services/verifier/file-content.js';
import { REPLAYS_DIR } from '../../pipeline/concepts/replay-files.js';

/**
 * A month's dataset on disk: `out/YYYY-MM/tasks.jsonl`, `tasks.parquet`, one folder per task, and
 * `manifest.json` — the only file that carries the production time, which is when these files
 * were first produced: emitting a month again with the same content keeps it, so every file
 * comes out byte for byte as it was. Written into a fresh
 * directory and swapped in, so a task dropped since the last emit leaves no folder behind and a
 * reader never sees half a month. A task folder's `replays/` (`perfmine replay`'s records, which
 * emit does not make) is carried over into the new month as it was.
 */

export interface MonthTask {
  readonly row: TaskRow;
  readonly files: Readonly<Record<string, string>>;
  /** Binary files of the folder (the sealed history's bundles), read from the store when written. */
  readonly blobs: Readonly<Record<string, BlobRef>>;
}

export interface MonthManifest {
  readonly month: string;
  readonly producedAt: string;
  readonly producer: string;
  readonly tasks: number;
  readonly instanceIds: readonly string[];
  /** sha256 of every file but the manifest, by path in the month's folder. */
  readonly sha256: Readonly<Record<string, string>>;
}

import { contentBytes, contentDigest } from '../../pipeline/services/verifier/file-content.js';

export { contentBytes, contentDigest, type FileContent } from '../../pipeline/services/verifier/file-content.js';

/** Every file of the month but the manifest, by relative path (pure; blobs are not read). */
export function monthFiles(tasks: readonly MonthTask[]): Map<string, FileContent> {
  const rows = sortRows(tasks.map((t) => t.row));
  const out = new Map<string, FileContent>();
  out.set('tasks.jsonl', toJsonl(rows));
  out.set('tasks.parquet', tasksParquet(rows));
  for (const task of [...tasks].sort((a, b) => (a.row.instance_id < b.row.instance_id ? -1 : 1))) {
    const names = [...Object.keys(task.files), ...Object.keys(task.blobs)].sort();
    for (const name of names) out.set(`${task.row.instance_id}/${name}`, task.files[name] ?? task.blobs[name]!);
  }
  return out;
}

/** The production time of the manifest already there, when it describes exactly these files; else `now`. */
function productionTime(final: string, month: string, producer: string, digests: Readonly<Record<string, string>>, now: string): string {
  let previous: Partial<MonthManifest>;
  try {
    previous = JSON.parse(readFileSync(join(final, 'manifest.json'), 'utf8')) as Partial<MonthManifest>;
  } catch {
    return now;
  }
  const same =
    previous.month === month &&
    previous.producer === producer &&
    typeof previous.producedAt === 'string' &&
    JSON.stringify(previous.sha256) === JSON.stringify(digests);
  return same ? previous.producedAt! : now;
}

export function writeMonth(
  outDir: string,
  month: string,
  tasks: readonly MonthTask[],
  producedAt: string,
  producer: string,
): MonthManifest {
  const files = monthFiles(tasks);
  const final = join(outDir, month);
  const staging = join(outDir, `.${month}.writing-${process.pid}`);
  const old = join(outDir, `.${month}.old-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const digests: Record<string, string> = {};
  for (const [path, content] of files) {
    mkdirSync(join(staging, path, '..'), { recursive: true });
    writeFileSync(join(staging, path), contentBytes(content, path));
    digests[path] = contentDigest(content);
  }
  const manifest: MonthManifest = {
    month,
    producedAt: productionTime(final, month, producer, digests, producedAt),
    producer,
    tasks: tasks.length,
    instanceIds: sortRows(tasks.map((t) => t.row)).map((r) => r.instance_id),
    sha256: digests,
  };
  writeFileSync(join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const id of manifest.instanceIds) {
    const replays = join(final, id, REPLAYS_DIR);
    if (existsSync(replays)) cpSync(replays, join(staging, id, REPLAYS_DIR), { recursive: true });
  }
  rmSync(old, { recursive: true, force: true });
  try {
    renameSync(final, old);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  renameSync(staging, final);
  rmSync(old, { recursive: true, force: true });
  return manifest;
}
