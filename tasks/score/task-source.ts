import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { blobRef, type BlobRef } from '../../cache/blobs.js';
import type { Ledger } from '../../cache/ledger.js';
import type { Db } from '../../cache/store.js';
import { ConfigError } from '../../pipeline/errors.js';
import { emitOutputSchema, type EmitOutput } from '../../pipeline/concepts/records/emit-output.js';
import { diskSource, readTaskFolderContents, TaskFolderError } from '../folder/index.js';
import type { VerifiableTask } from '../../pipeline/services/verifier/verifier-folder.js';

/**
 * The emitted tasks scoring can run, read from the store: each one's row (the expert patch), its
 * files and the sealed history's bundles, from which the verifier's run builds the task's
 * environment and its tests/ as the Harbor export does.
 */

export interface ScoreTask {
  readonly instanceId: string;
  readonly expertPatch: string;
  /** The task as the verifier runs it: its files and the sealed history's bundles. */
  readonly task: VerifiableTask;
}

/** Every emitted task in the store by instance id (done emit items whose candidate validate still keeps). */
export function emittedRows(ledger: Ledger): Map<string, EmitOutput> {
  const out = new Map<string, EmitOutput>();
  for (const row of ledger.list('emit', { statuses: ['done'] })) {
    if (ledger.get('validate', row.key)?.status !== 'done') continue;
    const parsed = emitOutputSchema.safeParse(row.output);
    if (parsed.success) out.set(parsed.data.row.instance_id, parsed.data);
  }
  return out;
}

/**
 * `--task ID|DIR`: an instance id, or an emitted task folder (its metadata.json names the
 * instance). A folder is read whole by the one reader (tasks/folder), so a broken one stops here
 * as a user error naming its file, before anything is built or written.
 */
export function resolveTaskArgument(arg: string): string {
  if (existsSync(arg) && statSync(arg).isDirectory()) {
    if (!existsSync(join(arg, 'metadata.json')))
      throw new ConfigError(`--task ${arg}: no metadata.json in the folder; is it an emitted task folder?`, { reason: 'invalid-task' });
    try {
      return readTaskFolderContents(diskSource(arg)).metadata.instance_id;
    } catch (error) {
      if (!(error instanceof TaskFolderError)) throw error;
      throw new ConfigError(`--task ${arg}: ${error.message}`, {
        reason: 'invalid-task',
        fix: 'write the folder again (perfmine stage emit --force), or give the instance id instead of the folder',
        cause: error,
      });
    }
  }
  return arg;
}

/** An emitted task as the verifier runs it; a ConfigError when a file of it is gone from the store. */
export function loadScoreTask(db: Db, emitted: EmitOutput): ScoreTask {
  const row = emitted.row;
  const blobs: Record<string, BlobRef> = {};
  for (const [path, digest] of Object.entries(emitted.blobs)) {
    const ref = blobRef(db, digest);
    if (!ref)
      throw new ConfigError(`${row.instance_id}: ${path} is gone from the store`, {
        reason: 'task-incomplete',
        fix: `run \`perfmine stage emit --force --month ${row.month ?? 'YYYY-MM'}\` to write it again`,
      });
    blobs[path] = ref;
  }
  return { instanceId: row.instance_id, expertPatch: row.patch, task: { row, files: emitted.files, blobs } };
}
