import { z } from 'zod';
import { environmentLockSchema, type EnvironmentLock, type LockedDistribution } from '../../concepts/records/environment-lock.js';
import { sameVersion } from '../../concepts/pep440.js';
import { normalizeProjectName } from '../package-index/distribution-filename.js';
import type { ServedFile } from '../package-index/index-session.js';

export { environmentLockSchema, type EnvironmentLock, type LockedDistribution };

/**
 * An environment's lock (issue 29): the exact distributions a verified build left installed,
 * read with the image's own Python (perfmine_lock.py `read`), each with where it came from:
 *
 * - `index`: a file the package index time machine served to this build, with its file name and
 *   SHA-256 (what `pip install --require-hashes --no-deps` installs again, byte for byte);
 * - `editable`: installed from the checkout (the package under test, built from source);
 * - `image`: the base image's own (Debian's packages, under /usr/lib/python3);
 * - `local`: installed some other way (a wheel in the repository, a build network without the time
 *   machine): recorded, but not reproducible from an index.
 *
 * Files the time machine served that are not installed are the build's own requirements (pip's
 * isolated builds): `build`, kept so that a rebuild can constrain them to the same versions. Pure.
 */

export const installedDistributionSchema = z.object({
  name: z.string().min(1),
  version: z.string(),
  location: z.string(),
  installer: z.string().nullable(),
  editable: z.boolean(),
  direct_url: z.unknown(),
});
export const installedSetSchema = z.object({ python: z.string(), distributions: z.array(installedDistributionSchema) });
export type InstalledSet = z.infer<typeof installedSetSchema>;

/** Where the base image keeps the distributions of its own packages (Debian). */
const IMAGE_SITE = /^\/usr\/lib\/python3(\.\d+)?(\/|$)/;

/** The lock of a build: what is installed, joined with what the time machine served it. */
export function lockOf(
  installed: InstalledSet,
  served: readonly ServedFile[],
  index: { readonly cutoff: string | null; readonly upstream: string | null } = { cutoff: null, upstream: null },
): EnvironmentLock {
  const servedBy = new Map<string, ServedFile[]>();
  for (const f of served) {
    const key = normalizeProjectName(f.project);
    servedBy.set(key, [...(servedBy.get(key) ?? []), f]);
  }
  const used = new Set<ServedFile>();
  const distributions = installed.distributions.map((d): LockedDistribution => {
    const candidates = servedBy.get(normalizeProjectName(d.name)) ?? [];
    const file =
      candidates.find((f) => f.version !== null && sameVersion(f.version, d.version)) ??
      (candidates.length === 1 && candidates[0]!.version === null ? candidates[0] : undefined);
    if (d.editable) return { name: d.name, version: d.version, source: 'editable', filename: null, sha256: null };
    if (file) {
      used.add(file);
      return { name: d.name, version: d.version, source: 'index', filename: file.filename, sha256: file.sha256 };
    }
    return { name: d.name, version: d.version, source: IMAGE_SITE.test(d.location) ? 'image' : 'local', filename: null, sha256: null };
  });
  const build = served
    .filter((f) => !used.has(f))
    .map((f) => ({ name: f.project, version: f.version, filename: f.filename, sha256: f.sha256 }))
    .sort((a, b) => (a.filename < b.filename ? -1 : a.filename > b.filename ? 1 : 0));
  return {
    python: installed.python,
    cutoff: index.cutoff,
    upstream: index.upstream,
    distributions: [...distributions].sort((a, b) => compareNames(a.name, b.name)),
    build,
  };
}

function compareNames(a: string, b: string): number {
  const x = normalizeProjectName(a);
  const y = normalizeProjectName(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * `requirements.lock` in pip's hash-checking form: every distribution the index served, pinned
 * with its file's hash (`pip install --require-hashes --no-deps -r requirements.lock`); the others
 * as comments saying where they come from.
 */
export function requirementsLock(lock: EnvironmentLock, title: string): string {
  const fromIndex = lock.distributions.filter((d) => d.source === 'index');
  const others = lock.distributions.filter((d) => d.source !== 'index');
  const lines = [
    `# ${title}`,
    `# The distributions the verified build installed from the package index${lock.cutoff ? ` as of ${lock.cutoff}` : ''}, each pinned to the file it installed:`,
    '#   pip install --require-hashes --no-deps -r requirements.lock',
    ...fromIndex.flatMap((d) => [`${d.name}==${d.version} \\`, `    --hash=sha256:${d.sha256}`]),
  ];
  if (others.length > 0) {
    lines.push('# Installed otherwise (not from the index):');
    for (const d of others) lines.push(`#   ${d.name}==${d.version} (${d.source})`);
  }
  if (lock.build.length > 0) {
    lines.push('# Served to the build and not installed (its isolated build requirements; constraints.txt pins them):');
    for (const b of lock.build) lines.push(`#   ${b.filename} sha256:${b.sha256}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `constraints.txt`: every version the index served to the build (installed or build-only), for PIP_CONSTRAINT. */
export function buildConstraints(lock: EnvironmentLock): string {
  const pins = new Map<string, string>();
  for (const d of lock.distributions) if (d.source === 'index') pins.set(normalizeProjectName(d.name), `${d.name}==${d.version}`);
  for (const b of lock.build) if (b.version !== null) pins.set(normalizeProjectName(b.name), `${b.name}==${b.version}`);
  return `${[...pins.values()].sort((a, b) => compareNames(a.split('==')[0]!, b.split('==')[0]!)).join('\n')}\n`;
}

/** One line per distribution, for `perfmine cache show` and the agent's hint. */
export function describeLock(lock: EnvironmentLock): string[] {
  return [
    `Python ${lock.python}${lock.cutoff ? `; package index as of ${lock.cutoff}` : ''}`,
    ...lock.distributions.map((d) => `${d.name}==${d.version} (${d.source}${d.filename ? `: ${d.filename}` : ''})`),
    ...lock.build.map((b) => `build requirement: ${b.filename}`),
  ];
}
