/**
 * A package tier's Debian lock: the exact versions of every package the tier installed or changed
 * relative to its base image (the listed packages and what apt pulled in with them), read with
 * dpkg-query in both images, kept as an image label on the tier, and installed by a task's
 * Dockerfile as `apt-get install name=version ...` after a check that names any locked version
 * the Debian mirror no longer has. Pure; package-tier.ts runs the queries and builds.
 */
import { DEBIAN_LOCK_ENTRY, debianLockSchema } from '../../concepts/records/debian-lock.js';

/** The tier's label that holds its lock (entries separated by spaces; empty: the tier changed nothing). */
export const DEBIAN_LOCK_LABEL = 'org.perfmine.debian-lock';

/**
 * What an image's dpkg holds, for `parseDpkgList`: its native architecture on the first line, then
 * one `status|name|architecture|version` line per package dpkg knows.
 */
export const DPKG_LIST_COMMAND: readonly string[] = [
  'sh',
  '-c',
  "dpkg --print-architecture && dpkg-query -W -f '${db:Status-Abbrev}|${Package}|${Architecture}|${Version}\\n'",
];

export interface DebianPackage {
  readonly name: string;
  readonly arch: string;
  readonly version: string;
}

export interface DpkgList {
  /** The image's own architecture (`dpkg --print-architecture`). */
  readonly native: string;
  /** The installed packages (status `?i?`), as dpkg-query lists them. */
  readonly packages: readonly DebianPackage[];
}

/** The output of DPKG_LIST_COMMAND: the native architecture and the installed packages (not the removed or half-installed ones). */
export function parseDpkgList(stdout: string): DpkgList {
  const lines = stdout.split('\n').map((l) => l.trim());
  const native = lines.find((l) => l.length > 0) ?? '';
  if (!/^[a-z0-9][a-z0-9-]*$/.test(native)) throw new RangeError(`not an architecture from dpkg --print-architecture: ${native}`);
  const packages: DebianPackage[] = [];
  for (const line of lines.slice(lines.indexOf(native) + 1)) {
    const [status, name, arch, version] = line.split('|');
    if (!status || !name || !arch || !version || status[1] !== 'i') continue;
    packages.push({ name, arch, version });
  }
  return { native, packages };
}

/** One package as apt-get names it: `name=version`, arch-qualified when it is neither the native architecture nor `all`. */
export function debianLockEntry(p: DebianPackage, native: string): string {
  const entry = p.arch === native || p.arch === 'all' ? `${p.name}=${p.version}` : `${p.name}:${p.arch}=${p.version}`;
  if (!DEBIAN_LOCK_ENTRY.test(entry)) throw new RangeError(`not a Debian package and version: ${entry}`);
  return entry;
}

/**
 * The tier's lock: every package installed in the tier that the base image does not hold at the
 * same version (new ones, and upgraded ones), sorted. A package the tier removed is not in it.
 */
export function debianLockOf(base: DpkgList, tier: DpkgList): string[] {
  const before = new Map(base.packages.map((p) => [`${p.name}:${p.arch}`, p.version]));
  return tier.packages
    .filter((p) => before.get(`${p.name}:${p.arch}`) !== p.version)
    .map((p) => debianLockEntry(p, tier.native))
    .sort();
}

/** The label's value for a lock. */
export function debianLockLabel(lock: readonly string[]): string {
  return lock.join(' ');
}

/** The lock an image's labels hold, or null when it has none (a tier built before locks) or a malformed one. */
export function debianLockFromLabels(labels: Readonly<Record<string, string>>): string[] | null {
  const value = labels[DEBIAN_LOCK_LABEL];
  if (value === undefined) return null;
  const parsed = debianLockSchema.safeParse(value.split(' ').filter((e) => e.length > 0));
  return parsed.success ? parsed.data : null;
}

/**
 * A task Dockerfile's lines (after its FROM the repository's base image) that install the tier's
 * lock: after apt-get update, each locked version is looked up in what the mirror serves
 * (`apt-cache madison`, which lists the sources' versions, not the installed ones); a missing one
 * is named with the versions the mirror has, and the build stops before installing anything.
 * Then every locked package at its version, without recommends, so that nothing else comes in.
 * No line when the lock is empty (the base image already held every listed package).
 */
export function lockedDebianInstallLines(packages: readonly string[], lock: readonly string[]): string[] {
  for (const entry of lock) if (!DEBIAN_LOCK_ENTRY.test(entry)) throw new RangeError(`not a Debian package and version: ${entry}`);
  if (lock.length === 0) return [];
  const words = lock.map((e) => `'${e}'`).join(' ');
  return [
    `# the repository's Debian packages (${packages.join(' ')}) at the versions its package tier installed (${lock.length} packages)`,
    'ENV DEBIAN_FRONTEND=noninteractive',
    'RUN apt-get update \\',
    ` && missing=0 && for p in ${words}; do \\`,
    `      n="\${p%%=*}"; v="\${p#*=}"; has=$(apt-cache madison "$n" | awk -F'|' '{ gsub(/ /, "", $2); printf " %s", $2 }'); \\`,
    `      case "$has " in *" $v "*) ;; *) missing=1; echo "the Debian mirror no longer has $p (locked by this task); versions of $n it has:\${has:- none}; point /etc/apt/sources.list at a snapshot of the mirror that has it (https://snapshot.debian.org/)" >&2 ;; esac; \\`,
    '    done && [ "$missing" = 0 ] \\',
    ` && apt-get install -y --no-install-recommends ${words} \\`,
    ' && rm -rf /var/lib/apt/lists/*',
  ];
}
