import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { replayRecordSchema, type ReplayRecord } from './records/replay-record.js';

/**
 * Replays kept in a task folder (`replays/<id>.json`), and what ties a replay to the folder it
 * replayed: the folder's digest. Replays add up across stores and machines by their id (a record
 * copied back into a folder, or made against another store, counts once).
 */

/** Where a task folder keeps its replays. */
export const REPLAYS_DIR = 'replays';

/**
 * Files of a task folder that do not enter its digest: the replays themselves and the texts an
 * agent reads (instructions, statement, scoring wrapper, metadata), which change nothing that is
 * built or measured. Everything else (Dockerfile, docker_build.sh, expert.patch, workloads.json,
 * the lock, the sealed history, perfmine's files and task.json) does: a replay counts for a
 * task only while the task's folder still digests the same.
 */
const OUTSIDE_DIGEST = new Set(['instruction.md', 'problem_statement.md', 'score.sh', 'metadata.json', 'manifest.json']);

export function entersDigest(path: string): boolean {
  return !path.startsWith(`${REPLAYS_DIR}/`) && !OUTSIDE_DIGEST.has(path);
}

/** The folder's digest from its files' SHA-256 (path → hex digest): sorted `path sha256` lines, hashed. Pure. */
export function folderDigest(files: Iterable<readonly [string, string]>): string {
  const lines = [...files]
    .filter(([path]) => entersDigest(path))
    .map(([path, sha]) => `${path} ${sha}`)
    .sort();
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

/** Replays of the same id counted once (the first one given wins), ordered by time then id. Pure. */
export function mergeReplays(...lists: readonly (readonly ReplayRecord[])[]): ReplayRecord[] {
  const byId = new Map<string, ReplayRecord>();
  for (const list of lists) for (const r of list) if (!byId.has(r.id)) byId.set(r.id, r);
  return [...byId.values()].sort((a, b) =>
    a.replayed_at < b.replayed_at ? -1 : a.replayed_at > b.replayed_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
  );
}

export interface FolderReplays {
  readonly records: ReplayRecord[];
  /** Files under replays/ that are not a readable record: `name: why`. */
  readonly problems: string[];
}

/** The replays a task folder holds (none when it has no replays/ directory). */
export function readFolderReplays(taskDir: string): FolderReplays {
  const dir = join(taskDir, REPLAYS_DIR);
  const records: ReplayRecord[] = [];
  const problems: string[] = [];
  if (!existsSync(dir)) return { records, problems };
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.json')) continue;
    try {
      const parsed = replayRecordSchema.safeParse(JSON.parse(readFileSync(join(dir, name), 'utf8')));
      if (parsed.success) records.push(parsed.data);
      else problems.push(`${name}: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`);
    } catch (error) {
      problems.push(`${name}: ${(error as Error).message}`);
    }
  }
  return { records: mergeReplays(records), problems };
}

/** The record's file text (what `replays/<id>.json` holds). */
export function replayFileText(record: ReplayRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

/** Writes `replays/<id>.json` into the task folder (through a temporary name: never half a file). */
export function writeFolderReplay(taskDir: string, record: ReplayRecord): string {
  const dir = join(taskDir, REPLAYS_DIR);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${record.id}.json`);
  const temp = join(dir, `.${record.id}.json.${process.pid}`);
  writeFileSync(temp, replayFileText(record));
  renameSync(temp, path);
  return path;
}
