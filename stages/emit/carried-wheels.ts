import { blobDigest, blobRef, saveBlob } from '../../cache/blobs.js';
import type { Db } from '../../cache/store.js';
import { ItemError } from '../../pipeline/errors.js';
import type { EnvironmentLock } from '../../pipeline/concepts/records/environment-lock.js';
import { lockedFiles, vendoredPath, vendorsWheels, type VendoredFile, type VendorWheels } from '../../pipeline/concepts/vendored-wheels.js';
import { normalizeProjectName } from '../../pipeline/services/package-index/distribution-filename.js';
import { fetchIndexFile } from '../../pipeline/services/package-index/index-file.js';
import type { Upstream } from '../../pipeline/services/package-index/upstream.js';

/**
 * The lock's files a task folder carries (emit.vendorWheels), as blobs of the store. The index
 * time machine keeps each file's bytes by their SHA-256 when it serves them to a build, so they
 * are normally here whether or not that index still exists. A file the store lacks (its build
 * kept nothing: made before this, with `never`, on a Slurm node) is asked of `index` (this run's
 * `synthesize.index.upstream`), kept when its bytes have the lock's SHA-256, and otherwise is an
 * ItemError that says what to do. The bytes are checked against the lock again whenever they are
 * written (file-content.ts).
 */
export interface CarriedWheels {
  readonly files: readonly VendoredFile[];
  /** `wheels/<filename>` → SHA-256, as emit records its blobs. */
  readonly blobs: Readonly<Record<string, string>>;
}

export interface CarriedWheelsItem {
  readonly key: string;
  readonly repo: string;
  readonly month: string;
}

export async function carriedWheels(
  db: Db,
  item: CarriedWheelsItem,
  lock: EnvironmentLock | null,
  setting: VendorWheels,
  index: Upstream | null,
): Promise<CarriedWheels> {
  if (!lock || !vendorsWheels(setting, lock.upstream)) return { files: [], blobs: {} };
  const { files, problems } = lockedFiles(lock);
  if (problems.length > 0)
    throw new ItemError('locked-files-unusable', `${item.key}: its lock's files cannot be carried in its folder: ${problems.join('; ')}`, {
      fix: 'set emit.vendorWheels to "never" in perfmine.config.json to emit it without them (its folder then needs the index to build)',
    });
  const missing: string[] = [];
  for (const file of files) {
    if (blobRef(db, file.sha256)) continue;
    const why = index ? await fetchKept(db, index, projectOf(lock, file.filename), file) : 'no index to ask';
    if (why !== null) missing.push(`${file.filename} sha256:${file.sha256} (${why})`);
  }
  if (missing.length > 0)
    throw new ItemError(
      'locked-files-missing',
      `${item.key}: ${missing.length} of the ${files.length} files its lock names are neither in the store nor to be had from the index: ${missing
        .slice(0, 3)
        .join(', ')}`,
      {
        fix: `run emit again with the index that served them reachable (synthesize.index.upstream or PERFMINE_INDEX_UPSTREAM; the demo's: dir:perfmine-demo/index): \`perfmine stage emit --force --month ${item.month} --repo ${item.repo}\`; or set emit.vendorWheels to "never"`,
      },
    );
  return { files, blobs: Object.fromEntries(files.map((f) => [vendoredPath(f), f.sha256])) };
}

/** Asks the index for a file the store lacks and keeps it when it is the lock's; null when kept, else why not. */
async function fetchKept(db: Db, index: Upstream, project: string, file: VendoredFile): Promise<string | null> {
  let bytes: Buffer | null;
  try {
    bytes = await fetchIndexFile(index, project, file.filename);
  } catch (error) {
    return `${index.description}: ${(error as Error).message}`;
  }
  if (bytes === null) return `${index.description} has no such file`;
  const digest = blobDigest(bytes);
  if (digest !== file.sha256) return `${index.description} serves other bytes by that name: sha256:${digest}`;
  saveBlob(db, bytes);
  return null;
}

/** The project of a locked file, as the lock names it (normalized, for its index page). */
function projectOf(lock: EnvironmentLock, filename: string): string {
  const name =
    lock.distributions.find((d) => d.filename === filename)?.name ?? lock.build.find((b) => b.filename === filename)?.name ?? filename;
  return normalizeProjectName(name);
}
