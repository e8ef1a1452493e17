/**
 * Project names and distribution file names (PEP 503 normalization; wheel and sdist file names).
 * Pure.
 */

/** PEP 503's normalized name: lower case, every run of `-`, `_`, `.` one `-`. */
export function normalizeProjectName(name: string): string {
  return name.replace(/[-_.]+/g, '-').toLowerCase();
}

/** A name PEP 503 allows (ASCII letters, digits, `.`, `-`, `_`), starting and ending with a letter or digit. */
export function isValidProjectName(name: string): boolean {
  return /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(name);
}

const SDIST_EXTENSIONS = ['.tar.gz', '.tar.bz2', '.tar.xz', '.tar.Z', '.tgz', '.tbz', '.tar', '.zip'] as const;

export interface DistributionName {
  /** The project, normalized. */
  readonly project: string;
  readonly version: string;
  readonly kind: 'wheel' | 'sdist' | 'egg';
}

/**
 * Project and version of a distribution file name, or null when the name is not a wheel
 * (`{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`), an sdist (`{name}-{version}.tar.gz`,
 * `.zip`, ...) or an egg. An sdist's name may itself hold `-`: with `project` given, the version is
 * what follows that project's name; otherwise it starts at the first `-` followed by a digit.
 */
export function parseDistributionFilename(filename: string, project?: string): DistributionName | null {
  if (filename.includes('/')) return null;
  if (filename.endsWith('.whl')) {
    const parts = filename.slice(0, -'.whl'.length).split('-');
    if (parts.length !== 5 && parts.length !== 6) return null;
    if (!parts[0] || !parts[1]) return null;
    return { project: normalizeProjectName(parts[0]), version: parts[1], kind: 'wheel' };
  }
  if (filename.endsWith('.egg')) {
    const parts = filename.slice(0, -'.egg'.length).split('-');
    if (parts.length < 2 || !parts[0] || !parts[1]) return null;
    return { project: normalizeProjectName(parts[0]), version: parts[1], kind: 'egg' };
  }
  const ext = SDIST_EXTENSIONS.find((e) => filename.toLowerCase().endsWith(e.toLowerCase()));
  if (!ext) return null;
  const base = filename.slice(0, -ext.length);
  if (project !== undefined) {
    const wanted = normalizeProjectName(project);
    for (let i = base.indexOf('-'); i > 0; i = base.indexOf('-', i + 1)) {
      if (normalizeProjectName(base.slice(0, i)) === wanted && i + 1 < base.length) {
        return { project: wanted, version: base.slice(i + 1), kind: 'sdist' };
      }
    }
  }
  const m = /^(.+?)-(\d.*)$/.exec(base);
  if (!m) return null;
  return { project: normalizeProjectName(m[1]!), version: m[2]!, kind: 'sdist' };
}
