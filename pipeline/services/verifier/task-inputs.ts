import type { BlobRef } from '../../../cache/blobs.js';
import { WHEELS_DIR } from '../../concepts/vendored-wheels.js';
import { ItemError } from '../../errors.js';
import { benchTaskOf, memorySource, NOT_ENVIRONMENT_FILES, readTaskFolderContents, REPO_BUNDLE } from '../../../tasks/folder/index.js';

/** What the inputs are read from (an emitted task, or a task folder read from disk). */
interface Source {
  readonly row: { readonly instance_id: string };
  readonly files: Readonly<Record<string, string>>;
  readonly blobs: Readonly<Record<string, BlobRef>>;
}

/**
 * What a Harbor task is made from, read from a perfmine task folder's own files (the folder is
 * the product: nothing else is consulted): perfmine-bench's task.json (base commit, asv config,
 * interpreter, validate's protocol), workloads.json (every workload's expert speedup and
 * verdict), the bundles of the sealed history. Read by the one reader (tasks/folder): a folder it
 * cannot read is a TaskFolderError naming the file. Pure.
 */

export interface HarborTaskInputs {
  readonly baseCommit: string;
  readonly asvConfig: string;
  readonly python: string | null;
  readonly protocol: Readonly<Record<string, unknown>>;
  /** validate's measurement time of the task (ms), when recorded. */
  readonly measuredMs: number | null;
  readonly workloads: readonly { readonly name: string; readonly speedup: number | null; readonly verdict: string }[];
  /** The folder's files the environment's Dockerfile copies (all but the task's own texts). */
  readonly environmentFiles: readonly string[];
  /** The sealed history's bundles (`source/...`). */
  readonly bundles: readonly string[];
  /** constraints.txt, when the lock has build requirements. */
  readonly constraints: boolean;
  /** The lock's files the folder carries (`wheels/...`): what every build finds with no index. */
  readonly wheels: readonly string[];
  /** The environment's perfmine-bench knows `compare --rebuild-working`. */
  readonly rebuildWorking: boolean;
}

/** A task that cannot be exported or verified as it is (a file of the verifier's not given by content, a path it cannot carry). */
export class HarborExportError extends ItemError {
  constructor(message: string) {
    super('not-exportable', message, { fix: 'write the task again (`perfmine stage emit --force --month YYYY-MM`), or leave it out' });
  }
}

export function harborTaskInputs(task: Source): HarborTaskInputs {
  const folder = readTaskFolderContents(memorySource(task.row.instance_id, task.files, Object.keys(task.blobs)));
  const bench = benchTaskOf(folder);
  const bundles = Object.keys(task.blobs)
    .filter((p) => p.startsWith('source/') && p.endsWith('.bundle'))
    .sort();
  const wheels = Object.keys(task.blobs)
    .filter((p) => p.startsWith(`${WHEELS_DIR}/`))
    .sort();
  if (!bundles.includes(REPO_BUNDLE))
    throw new HarborExportError(
      `${task.row.instance_id}: the task folder has no ${REPO_BUNDLE} (emitted before sealed histories existed): it cannot be built anywhere else`,
    );
  const measured = bench.protocol['measuredMs'];
  return {
    baseCommit: bench.base_commit,
    asvConfig: bench.asv_config,
    python: bench.python ?? null,
    protocol: bench.protocol,
    measuredMs: typeof measured === 'number' && Number.isFinite(measured) && measured > 0 ? measured : null,
    workloads: folder.workloads.map((w) => ({ name: w.name, speedup: w.speedup ?? null, verdict: w.perfmine_verdict.change })),
    environmentFiles: [...Object.keys(task.files).filter((f) => !NOT_ENVIRONMENT_FILES.has(f)), ...Object.keys(task.blobs)].sort(),
    bundles,
    constraints: task.files['constraints.txt'] !== undefined,
    wheels,
    rebuildWorking: folder.features.includes('rebuild-working'),
  };
}
