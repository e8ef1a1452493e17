import type { EnvironmentLock } from './records/environment-lock.js';

/**
 * A task folder's own copy of the files its lock names (issue 36): the distributions the package
 * index served the verified build (`index` in the lock) and its build requirements (`build`),
 * under `wheels/`, each by the name the index gave it and checked against the lock's SHA-256, so
 * that `docker build` of the folder (and of its Harbor environment, and the verifier's side
 * builds) needs no index at all. Which folders carry them is `emit.vendorWheels`: `auto` when the
 * index the build went through is not a public one (a loopback or `dir:` index, as the demo's,
 * which no one else can reach), `always`, or `never`. Pure.
 */

/** Where a task folder keeps its locked files (and the image its copy of them: `/perfmine/wheels`). */
export const WHEELS_DIR = 'wheels';
/** sha256sum's check file over `wheels/`: every file with the lock's SHA-256. */
export const WHEELS_CHECK_FILE = 'wheels.sha256';

export const VENDOR_WHEELS = ['auto', 'always', 'never'] as const;
export type VendorWheels = (typeof VENDOR_WHEELS)[number];

/** A file of the lock a folder carries: its name (as the index served it) and the lock's SHA-256. */
export interface VendoredFile {
  readonly filename: string;
  readonly sha256: string;
}

/** An index anyone can reach again: https, on another host than this one. Loopback, plain http and `dir:` are not. */
export function isPublicIndex(upstream: string | null): boolean {
  if (upstream === null) return false;
  let url: URL;
  try {
    url = new URL(upstream);
  } catch {
    return false;
  }
  const host = url.hostname;
  return url.protocol === 'https:' && host !== 'localhost' && host !== '[::1]' && !/^127\./.test(host);
}

/** Whether a folder whose lock came from `upstream` carries the lock's files (null: the build had no index). */
export function vendorsWheels(setting: VendorWheels, upstream: string | null): boolean {
  if (setting === 'never') return false;
  return setting === 'always' || (upstream !== null && !isPublicIndex(upstream));
}

/** A file name that can stand in the folder, a Dockerfile and a check file as it is. */
const SAFE_FILENAME = /^[A-Za-z0-9][A-Za-z0-9._+!~-]*$/;
const SHA256 = /^[0-9a-f]{64}$/;

/**
 * The lock's files (its `index` distributions, then its build requirements), each once, sorted by
 * name; `problems` names what cannot be carried (no file recorded, a name that is not a plain file
 * name, a malformed hash, one name with two hashes).
 */
export function lockedFiles(lock: EnvironmentLock): { files: VendoredFile[]; problems: string[] } {
  const problems: string[] = [];
  const byName = new Map<string, string>();
  const add = (what: string, filename: string | null, sha256: string | null) => {
    if (filename === null || sha256 === null) return void problems.push(`${what}: the lock records no file for it`);
    if (!SAFE_FILENAME.test(filename) || filename.includes('..'))
      return void problems.push(`${what}: ${JSON.stringify(filename)} is not a plain file name`);
    if (!SHA256.test(sha256)) return void problems.push(`${what}: ${filename}: not a SHA-256: ${JSON.stringify(sha256)}`);
    const known = byName.get(filename);
    if (known !== undefined && known !== sha256) return void problems.push(`${filename}: the lock gives it two hashes`);
    byName.set(filename, sha256);
  };
  for (const d of lock.distributions) if (d.source === 'index') add(`${d.name}==${d.version}`, d.filename, d.sha256);
  for (const b of lock.build) add(`build requirement ${b.name}`, b.filename, b.sha256);
  const files = [...byName].map(([filename, sha256]) => ({ filename, sha256 })).sort((a, b) => compare(a.filename, b.filename));
  return { files, problems };
}

/** A locked file's path in the folder. */
export function vendoredPath(file: VendoredFile): string {
  return `${WHEELS_DIR}/${file.filename}`;
}

/** `wheels.sha256`: sha256sum's check file over the folder's `wheels/` (run in that directory). */
export function wheelsCheckFile(files: readonly VendoredFile[]): string {
  return files.map((f) => `${f.sha256}  ${f.filename}\n`).join('');
}

/** The paths of a task folder that hold bytes, not text: the sealed history's bundles and the locked files. */
export function isBinaryTaskPath(path: string): boolean {
  return path.endsWith('.bundle') || path.startsWith(`${WHEELS_DIR}/`);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
