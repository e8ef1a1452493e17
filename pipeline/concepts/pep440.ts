/**
 * PEP 440 version specifiers, for the Python versions a project declares (`requires-python`,
 * `python_requires`): discover asks whether a project supports some Python >= 3.N, synthesize which
 * offered `X.Y` to build with. Release segments only (`3.8`, `3.11.4`); versions compare with
 * zero padding (`3.11` is `3.11.0`). Pure.
 */

export type Version = readonly number[];

/** The release segment of a version (`v3.11.4rc1` → [3, 11, 4]), or null. */
export function parseVersion(text: string): Version | null {
  const m = /^\s*v?(\d+(?:\.\d+)*)/.exec(text);
  return m ? m[1]!.split('.').map(Number) : null;
}

/** Negative, zero or positive as a is before, equal to or after b (zero padding). */
export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

interface Clause {
  readonly op: '~=' | '===' | '==' | '!=' | '<=' | '>=' | '<' | '>';
  readonly target: Version;
  /** `==3.8.*` / `!=3.8.*`: a prefix match. */
  readonly wildcard: boolean;
}

function parseClause(text: string): Clause | null {
  const m = /^\s*(~=|===|==|!=|<=|>=|<|>)\s*([0-9]+(?:\.[0-9]+)*)(\.\*)?\s*$/.exec(text);
  if (!m) return null;
  const op = m[1] as Clause['op'];
  const wildcard = Boolean(m[3]);
  // a wildcard goes only with == and !=; ~= needs at least two components (PEP 440)
  if (wildcard && op !== '==' && op !== '!=') return null;
  const target = parseVersion(m[2]!)!;
  if (op === '~=' && target.length < 2) return null;
  return { op, target, wildcard };
}

function parseSpecifier(spec: string): Clause[] | null {
  const texts = spec
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  if (texts.length === 0) return null;
  const clauses = texts.map(parseClause);
  return clauses.every((c): c is Clause => c !== null) ? clauses : null;
}

function matches(v: Version, c: Clause): boolean {
  const prefix = (p: Version) => p.every((x, i) => (v[i] ?? 0) === x);
  switch (c.op) {
    case '==':
    case '===':
      return c.wildcard ? prefix(c.target) : compareVersions(v, c.target) === 0;
    case '!=':
      return c.wildcard ? !prefix(c.target) : compareVersions(v, c.target) !== 0;
    case '>=':
      return compareVersions(v, c.target) >= 0;
    case '<=':
      return compareVersions(v, c.target) <= 0;
    case '>':
      return compareVersions(v, c.target) > 0;
    case '<':
      return compareVersions(v, c.target) < 0;
    case '~=':
      return compareVersions(v, c.target) >= 0 && prefix(c.target.slice(0, -1));
  }
}

/** Whether a version satisfies a specifier set (`>=3.8,<3.13`); null when either cannot be read. */
export function satisfiesSpecifier(version: string, spec: string): boolean | null {
  const v = parseVersion(version);
  const clauses = parseSpecifier(spec);
  if (!v || !clauses) return null;
  return clauses.every((c) => matches(v, c));
}

/**
 * Whether some release of the series `X.Y` (`X.Y.0`, `X.Y.1`, …) satisfies a specifier set: what
 * "Python X.Y is supported" means. `<=3.11` and `==3.11` admit 3.11 (3.11.0 does); `<3.11`
 * does not. Null when the specifier cannot be read.
 */
export function seriesSatisfies(series: string, spec: string): boolean | null {
  const s = parseVersion(series);
  const clauses = parseSpecifier(spec);
  if (!s || !clauses) return null;
  const [major = 0, minor = 0] = s;
  // The answer changes only at the clauses' own patch numbers: try each, its neighbours, and the ends.
  const micros = new Set([0, 999]);
  for (const c of clauses) {
    if (c.target[0] === major && c.target[1] === minor) for (const d of [-1, 0, 1]) micros.add(Math.max(0, (c.target[2] ?? 0) + d));
  }
  return [...micros].some((micro) => clauses.every((c) => matches([major, minor, micro], c)));
}

/** Whether some Python 3.x with min <= x <= 30 satisfies a specifier set; null when it cannot be read. */
export function specifierAllowsAtLeast(spec: string, minMinor: number): boolean | null {
  if (parseSpecifier(spec) === null) return null;
  for (let minor = minMinor; minor <= 30; minor += 1) if (seriesSatisfies(`3.${minor}`, spec)) return true;
  return false;
}
