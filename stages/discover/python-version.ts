/**
 * Does a project support Python >= 3.N? Read from `requires-python` (pyproject.toml),
 * `python_requires` (setup.cfg, setup.py) and `Programming Language :: Python :: 3.x`
 * classifiers. Pure. Unknown when none of them says.
 */

export interface PythonSupport {
  /** true / false when the metadata says; null when it does not. */
  readonly supported: boolean | null;
  /** What was read (`requires-python >=3.9`, `classifiers 3.6, 3.7`), for the record. */
  readonly evidence: string | null;
}

export interface ProjectFiles {
  readonly pyproject?: string | null;
  readonly setupCfg?: string | null;
  readonly setupPy?: string | null;
}

type Version = readonly number[];

function parseVersion(text: string): Version | null {
  const m = /^(\d+(?:\.\d+)*)/.exec(text.trim());
  return m ? m[1]!.split('.').map(Number) : null;
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function prefixMatch(v: Version, prefix: Version): boolean {
  return prefix.every((p, i) => (v[i] ?? 0) === p);
}

/** Whether a version satisfies one clause (`>=3.8`, `!=3.0.*`, `~=3.6`, `==3.*`). */
function satisfies(v: Version, clause: string): boolean | null {
  const m = /^(~=|===|==|!=|<=|>=|<|>)\s*([0-9][0-9.]*)(\.\*)?$/.exec(clause.trim());
  if (!m) return null;
  const [, op, text, star] = m as unknown as [string, string, string, string | undefined];
  const target = parseVersion(text);
  if (!target) return null;
  switch (op) {
    case '==':
    case '===':
      return star ? prefixMatch(v, target) : compare(v, target) === 0;
    case '!=':
      return star ? !prefixMatch(v, target) : compare(v, target) !== 0;
    case '>=':
      return compare(v, target) >= 0;
    case '<=':
      return compare(v, target) <= 0;
    case '>':
      return compare(v, target) > 0;
    case '<':
      return compare(v, target) < 0;
    case '~=': {
      if (target.length < 2) return null;
      return compare(v, target) >= 0 && prefixMatch(v, target.slice(0, -1));
    }
  }
  return null;
}

/**
 * Whether some Python 3.x with x >= min (up to 3.30) satisfies a PEP 440 specifier set; null
 * when the specifier cannot be read.
 */
export function specifierAllowsAtLeast(spec: string, minMinor: number): boolean | null {
  const clauses = spec.split(',').map((c) => c.trim()).filter((c) => c !== '');
  if (clauses.length === 0) return null;
  for (let minor = minMinor; minor <= 30; minor++) {
    for (const micro of [0, 99]) {
      let all = true;
      for (const clause of clauses) {
        const ok = satisfies([3, minor, micro], clause);
        if (ok === null) return null;
        if (!ok) {
          all = false;
          break;
        }
      }
      if (all) return true;
    }
  }
  return false;
}

/** `requires-python` / `python_requires` from the project files, first found. */
export function findRequiresPython(files: ProjectFiles): { spec: string; from: string } | null {
  const py = files.pyproject && /^\s*requires-python\s*=\s*(["'])(.*?)\1/m.exec(files.pyproject);
  if (py) return { spec: py[2]!, from: 'requires-python' };
  const cfg = files.setupCfg && /^\s*python_requires\s*=\s*(.+?)\s*$/m.exec(files.setupCfg);
  if (cfg) return { spec: cfg[1]!.replace(/^["']|["']$/g, ''), from: 'python_requires' };
  const setup = files.setupPy && /python_requires\s*=\s*(["'])(.*?)\1/.exec(files.setupPy);
  if (setup) return { spec: setup[2]!, from: 'python_requires' };
  return null;
}

/** Minor versions of `Programming Language :: Python :: 3.x` classifiers in any of the files. */
export function classifierMinors(files: ProjectFiles): number[] {
  const text = [files.pyproject, files.setupCfg, files.setupPy].filter((t): t is string => typeof t === 'string').join('\n');
  const minors = new Set<number>();
  for (const m of text.matchAll(/Programming Language :: Python :: 3\.(\d+)/g)) minors.add(Number(m[1]));
  return [...minors].sort((a, b) => a - b);
}

export function readPythonSupport(files: ProjectFiles, minPython: string): PythonSupport {
  const minMinor = Number(minPython.split('.')[1] ?? 0);
  const req = findRequiresPython(files);
  if (req) {
    const allowed = specifierAllowsAtLeast(req.spec, minMinor);
    if (allowed !== null) return { supported: allowed, evidence: `${req.from} ${req.spec}` };
  }
  const minors = classifierMinors(files);
  if (minors.length > 0) return { supported: minors.some((m) => m >= minMinor), evidence: `classifiers ${minors.map((m) => `3.${m}`).join(', ')}` };
  return { supported: null, evidence: null };
}
