/**
 * Which Python to build a commit with, among those the base image offers, from the project's
 * metadata at that commit (`requires-python` / `python_requires`, then the version classifiers).
 * Pure.
 */
export interface PythonMetadata {
  /** A PEP 440 specifier set such as `>=3.8,<3.13`, or null when the project declares none. */
  readonly requiresPython: string | null;
  /** `X.Y` from `Programming Language :: Python :: X.Y` classifiers. */
  readonly classifierVersions: readonly string[];
}

export interface PythonChoice {
  /** `X.Y`, one of the offered versions. */
  readonly version: string;
  /** Whether the choice satisfies what the project declares (false: the closest offer was taken). */
  readonly satisfiesMetadata: boolean;
  readonly reason: string;
}

type Version = readonly number[];

function parseVersion(text: string): Version | null {
  const m = /^\s*v?(\d+(?:\.\d+)*)/.exec(text);
  return m ? m[1]!.split('.').map(Number) : null;
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Whether an offered `X.Y` satisfies one clause. The offer stands for its newest patch release
 * (`X.Y.99`), and a bound written with two components (`<=3.11`, `==3.11`) means the series, as
 * projects mean it.
 */
function satisfiesClause(offer: Version, clause: string): boolean | null {
  const m = /^\s*(~=|===|==|!=|<=|>=|<|>)\s*([0-9]+(?:\.[0-9]+)*)(\.\*)?\s*$/.exec(clause);
  if (!m) return null;
  const op = m[1]!;
  const target = parseVersion(m[2]!)!;
  const series = Boolean(m[3]) || target.length <= 2;
  const v = [offer[0] ?? 0, offer[1] ?? 0, 99];
  const prefix = (t: Version) => t.every((x, i) => v[i] === x);
  switch (op) {
    case '==':
    case '===':
      return series ? prefix(target) : compare(v, target) === 0;
    case '!=':
      return series ? !prefix(target) : compare(v, target) !== 0;
    case '>=':
      return compare(v, target) >= 0;
    case '>':
      return compare(v, target) > 0;
    case '<=':
      return series ? compare(v.slice(0, 2), target) <= 0 : compare(v, target) <= 0;
    case '<':
      return compare(v, target) < 0;
    case '~=':
      return target.length >= 2 && compare(v, target) >= 0 && prefix(target.slice(0, -1));
    default:
      return null;
  }
}

/** True, false, or null when the specifier cannot be read. */
export function satisfiesSpecifier(version: string, specifier: string): boolean | null {
  const v = parseVersion(version);
  if (!v) return null;
  const clauses = specifier
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  if (clauses.length === 0) return null;
  let result = true;
  for (const clause of clauses) {
    const ok = satisfiesClause(v, clause);
    if (ok === null) return null;
    result &&= ok;
  }
  return result;
}

export function choosePython(meta: PythonMetadata, offered: readonly string[]): PythonChoice {
  if (offered.length === 0) throw new RangeError('no Python version offered');
  const byNewest = [...offered].sort((a, b) => compare(parseVersion(b) ?? [0], parseVersion(a) ?? [0]));
  const newest = byNewest[0]!;
  const spec = meta.requiresPython?.trim() || null;
  if (spec) {
    const fits = byNewest.filter((v) => satisfiesSpecifier(v, spec) === true);
    const listed = fits.filter((v) => meta.classifierVersions.includes(v));
    if (listed.length > 0) return { version: listed[0]!, satisfiesMetadata: true, reason: `newest offered version that satisfies requires-python "${spec}" and is listed in the classifiers` };
    if (fits.length > 0) return { version: fits[0]!, satisfiesMetadata: true, reason: `newest offered version that satisfies requires-python "${spec}"` };
    if (byNewest.every((v) => satisfiesSpecifier(v, spec) === null)) {
      return { version: newest, satisfiesMetadata: false, reason: `requires-python "${spec}" could not be read; newest offered version` };
    }
    return { version: newest, satisfiesMetadata: false, reason: `no offered version (${offered.join(', ')}) satisfies requires-python "${spec}"; newest offered version` };
  }
  const listed = byNewest.filter((v) => meta.classifierVersions.includes(v));
  if (listed.length > 0) return { version: listed[0]!, satisfiesMetadata: true, reason: 'newest offered version listed in the classifiers' };
  if (meta.classifierVersions.length > 0) {
    return { version: newest, satisfiesMetadata: false, reason: `classifiers list ${meta.classifierVersions.join(', ')}, none offered; newest offered version` };
  }
  return { version: newest, satisfiesMetadata: true, reason: 'the project declares no Python version; newest offered version' };
}
