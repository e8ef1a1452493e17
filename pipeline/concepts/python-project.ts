/**
 * A Python project's metadata as its packaging files state it: a lenient reader of pyproject.toml
 * (tables, strings, arrays of strings), setup.cfg and setup.py, and the Python versions the
 * project declares (`requires-python` / `python_requires`, the version classifiers). Pure (the
 * caller reads the files). Discover and synthesize both read the declared Python through it.
 */

/** The packaging files' texts (null or absent: not there). */
export interface ProjectFiles {
  readonly pyproject?: string | null;
  readonly setupCfg?: string | null;
  readonly setupPy?: string | null;
}

export interface PythonMetadata {
  /** A PEP 440 specifier set such as `>=3.8,<3.13`, or null when the project declares none. */
  readonly requiresPython: string | null;
  /** `X.Y` from `Programming Language :: Python :: X.Y` classifiers, sorted. */
  readonly classifierVersions: readonly string[];
}

// ---- a lenient TOML reader: tables, strings and (multi-line) arrays of strings -------------

export type TomlValue = string | boolean | number | readonly string[] | Readonly<Record<string, string>>;

export function readTomlTables(text: string): Map<string, Map<string, TomlValue>> {
  const tables = new Map<string, Map<string, TomlValue>>();
  let current = new Map<string, TomlValue>();
  tables.set('', current);
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i += 1) {
    const line = stripComment(lines[i]!).trim();
    if (!line) continue;
    const header = /^\[\s*([^\]]+?)\s*\]$/.exec(line);
    if (header && !line.startsWith('[[')) {
      current = tables.get(header[1]!) ?? new Map();
      tables.set(header[1]!, current);
      continue;
    }
    const kv = /^("?[\w.-]+"?)\s*=\s*(.*)$/.exec(line);
    if (!kv) continue;
    const key = kv[1]!.replace(/"/g, '');
    let value = kv[2]!;
    const opener = value.startsWith('[') ? ['[', ']'] : value.startsWith('{') ? ['{', '}'] : null;
    if (opener) {
      while (depth(value, opener[0]!, opener[1]!) > 0 && i + 1 < lines.length) {
        i += 1;
        value += `\n${stripComment(lines[i]!)}`;
      }
    }
    current.set(key, parseTomlValue(value.trim()));
  }
  return tables;
}

export function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i]!;
    if (quote) {
      if (c === '\\') i += 1;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') return line.slice(0, i);
  }
  return line;
}

export function depth(text: string, open: string, close: string): number {
  let d = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i += 1;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === open) d += 1;
    else if (c === close) d -= 1;
  }
  return d;
}

export function quotedStrings(text: string): string[] {
  return [...text.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)].map((m) => m[1] ?? m[2] ?? '');
}

export function parseTomlValue(value: string): TomlValue {
  if (value.startsWith('[')) return quotedStrings(value);
  if (value.startsWith('{')) {
    const out: Record<string, string> = {};
    for (const m of value.matchAll(/"?([\w.-]*)"?\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*')/g)) out[m[1]!] = m[2]!.slice(1, -1);
    return out;
  }
  const str = /^(?:"((?:[^"\\]|\\.)*)"|'([^']*)')/.exec(value);
  if (str) return str[1] ?? str[2] ?? '';
  if (value === 'true' || value === 'false') return value === 'true';
  const n = Number(value);
  return Number.isNaN(n) ? value : n;
}

export function asString(v: TomlValue | undefined): string | null {
  return typeof v === 'string' ? v : null;
}

export function asList(v: TomlValue | undefined): string[] {
  return Array.isArray(v) ? [...(v as readonly string[])] : [];
}

// ---- setup.py / setup.cfg ---------------------------------------------------------------------

export function setupPyString(text: string, key: string): string | null {
  const m = new RegExp(`\\b${key}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(text);
  return m ? (m[1] ?? m[2] ?? null) : null;
}

export function setupPyList(text: string, key: string): string[] {
  const m = new RegExp(`\\b${key}\\s*=\\s*\\[([^\\]]*)\\]`).exec(text);
  return m ? quotedStrings(m[1]!) : [];
}

export function readIni(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let current: Map<string, string> | null = null;
  let lastKey: string | null = null;
  for (const raw of text.split(/\r?\n/)) {
    if (/^\s*[#;]/.test(raw)) continue;
    const header = /^\[([^\]]+)\]\s*$/.exec(raw);
    if (header) {
      current = new Map();
      sections.set(header[1]!.trim(), current);
      lastKey = null;
      continue;
    }
    if (!current) continue;
    const kv = /^([\w.-]+)\s*[=:]\s*(.*)$/.exec(raw);
    if (kv && !/^\s/.test(raw)) {
      lastKey = kv[1]!;
      current.set(lastKey, kv[2]!.trim());
    } else if (lastKey && /^\s+\S/.test(raw)) {
      current.set(lastKey, `${current.get(lastKey) ?? ''}\n${raw.trim()}`.trim());
    }
  }
  return sections;
}

export function iniList(value: string | undefined): string[] {
  return (value ?? '')
    .split(/[\n;]/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && !s.startsWith('#'));
}

// ---- the declared Python ----------------------------------------------------------------------

export function classifierVersions(classifiers: readonly string[]): string[] {
  const out = new Set<string>();
  for (const c of classifiers) {
    const m = /^Programming Language :: Python :: (\d+\.\d+)\s*$/.exec(c.trim());
    if (m) out.add(m[1]!);
  }
  return [...out].sort();
}

function projectTable(files: ProjectFiles): Map<string, TomlValue> {
  return (files.pyproject ? readTomlTables(files.pyproject).get('project') : undefined) ?? new Map<string, TomlValue>();
}

/** `requires-python` (pyproject.toml), else `python_requires` (setup.cfg, then setup.py), with where it was read. */
export function declaredRequiresPython(
  files: ProjectFiles,
): { readonly spec: string; readonly from: 'requires-python' | 'python_requires' } | null {
  const fromToml = asString(projectTable(files).get('requires-python'));
  if (fromToml !== null) return { spec: fromToml, from: 'requires-python' };
  const fromCfg = files.setupCfg
    ? readIni(files.setupCfg)
        .get('options')
        ?.get('python_requires')
        ?.replace(/^["']|["']$/g, '')
    : undefined;
  if (fromCfg) return { spec: fromCfg, from: 'python_requires' };
  const fromSetup = files.setupPy ? setupPyString(files.setupPy, 'python_requires') : null;
  return fromSetup !== null ? { spec: fromSetup, from: 'python_requires' } : null;
}

/** The Python versions the project declares: requires-python (pyproject), python_requires (setup.cfg, setup.py), classifiers. */
export function pythonMetadataOf(files: ProjectFiles): PythonMetadata {
  const cfg = files.setupCfg ? readIni(files.setupCfg) : new Map<string, Map<string, string>>();
  const setupPy = files.setupPy ?? null;
  const classifiers = [
    ...asList(projectTable(files).get('classifiers')),
    ...iniList(cfg.get('metadata')?.get('classifiers')),
    ...(setupPy ? setupPyList(setupPy, 'classifiers') : []),
  ];
  return { requiresPython: declaredRequiresPython(files)?.spec ?? null, classifierVersions: classifierVersions(classifiers) };
}
