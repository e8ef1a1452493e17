/**
 * PEP 440 versions and specifiers, for the Python versions a project declares (`requires-python`,
 * `python_requires`): discover asks whether a project supports some Python >= 3.N, synthesize which
 * offered `X.Y` to build with. The PEP 440 rules themselves (normalization, zero padding, `~=`,
 * `.*` prefixes, pre-, post- and dev-releases, epochs) are @renovatebot/pep440's; this module says
 * what a series supports and what cannot be read (null). Pure.
 */
import { compare, eq, explain, filter, satisfies, valid, type Pep440Constraint } from '@renovatebot/pep440';
import { parse as parseRange } from '@renovatebot/pep440/lib/specifier.js';

export type Version = readonly number[];

/**
 * The release segment of a version (`v3.11.4rc1` → [3, 11, 4]), or null; a name that is not a PEP
 * 440 version but starts like one (`3.13t`, a free-threaded build) gives its leading numbers.
 */
export function parseVersion(text: string): Version | null {
  const explained = explain(text.trim());
  if (explained) return explained.release;
  const m = /^\s*v?(\d+(?:\.\d+)*)/.exec(text);
  return m ? m[1]!.split('.').map(Number) : null;
}

/** Negative, zero or positive as a is before, equal to or after b (zero padding: `3.11` is `3.11.0`). */
export function compareVersions(a: Version, b: Version): number {
  return compare(a.join('.') || '0', b.join('.') || '0');
}

/**
 * Whether two version strings are the same version under PEP 440's normalization (`1.0` and
 * `1.0.0`, `1.0-post0` and `1.0.post0`, `1.0RC1` and `1.0rc1`, `v1.0` and `1.0`); strings that
 * are not PEP 440 versions are equal only when identical.
 */
export function sameVersion(a: string, b: string): boolean {
  if (a === b) return true;
  return valid(a) !== null && valid(b) !== null && eq(a, b);
}

interface Specifier {
  readonly text: string;
  readonly clauses: readonly Pep440Constraint[];
}

/** A specifier set as the library reads it (empty clauses from a stray comma dropped), or null. */
function readSpecifier(spec: string): Specifier | null {
  const text = spec
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '')
    .join(',');
  // parse() is typed as an array but is null for a specifier it cannot read
  const clauses: readonly Pep440Constraint[] | null = text === '' ? null : parseRange(text);
  return clauses ? { text, clauses } : null;
}

/** Whether a version satisfies a specifier set (`>=3.8,<3.13`); null when either cannot be read. */
export function satisfiesSpecifier(version: string, spec: string): boolean | null {
  const v = version.trim();
  const s = readSpecifier(spec);
  if (valid(v) === null || s === null) return null;
  return satisfies(v, s.text);
}

/** The releases of `major.minor` at which a specifier set's answer can change: each clause's own patch number, its neighbours, and the ends. */
function seriesCandidates(major: number, minor: number, specifier: Specifier): string[] {
  const micros = new Set([0, 999]);
  for (const clause of specifier.clauses) {
    const [cMajor, cMinor, cMicro = 0] = explain(clause.version)?.release ?? [];
    if (cMajor === major && cMinor === minor) for (const d of [-1, 0, 1]) micros.add(Math.max(0, cMicro + d));
  }
  // `X.Y` itself too, for `===X.Y` (arbitrary equality compares the text)
  return [`${major}.${minor}`, ...[...micros].map((micro) => `${major}.${minor}.${micro}`)];
}

/**
 * Whether some release of the series `X.Y` (`X.Y.0`, `X.Y.1`, …) satisfies a specifier set: what
 * "Python X.Y is supported" means. `<=3.11` and `==3.11` admit 3.11 (3.11.0 does); `<3.11`
 * does not. Null when the specifier cannot be read.
 */
export function seriesSatisfies(series: string, spec: string): boolean | null {
  const s = parseVersion(series);
  const specifier = readSpecifier(spec);
  if (!s || specifier === null) return null;
  const [major = 0, minor = 0] = s;
  return someReleaseOf(major, minor, specifier);
}

function someReleaseOf(major: number, minor: number, specifier: Specifier): boolean {
  // filter() reads the specifier once for all the candidates (satisfies() would read it for each);
  // they are final releases, so prereleases: false changes no answer and spares filter() its second pass
  return filter(seriesCandidates(major, minor, specifier), specifier.text, { prereleases: false }).length > 0;
}

/** Whether some Python 3.x with min <= x <= 30 satisfies a specifier set; null when it cannot be read. */
export function specifierAllowsAtLeast(spec: string, minMinor: number): boolean | null {
  const specifier = readSpecifier(spec);
  if (specifier === null) return null;
  for (let minor = minMinor; minor <= 30; minor += 1) if (someReleaseOf(3, minor, specifier)) return true;
  return false;
}
