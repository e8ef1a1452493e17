/**
 * A TOML 1.0 document from plain data, for Harbor's task.toml: the root's keys first, then one
 * `[table]` per nested object (depth first, keys in the order given). Strings are basic strings
 * with every control character escaped; a whole number is an integer unless its dotted path is in
 * `floats` (then written with a decimal point, as Harbor's documentation writes timeouts); no null
 * (a key whose value is null or undefined is left out). Pure.
 */

export type TomlValue = string | number | boolean | readonly TomlValue[] | TomlTable | null | undefined;
export interface TomlTable {
  readonly [key: string]: TomlValue;
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function tomlKey(key: string): string {
  return BARE_KEY.test(key) ? key : tomlString(key);
}

/** A TOML basic string: `"`, `\` and every control character (U+0000-U+001F, U+007F) escaped. */
export function tomlString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function isTable(v: TomlValue): v is TomlTable {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function tomlNumber(n: number, float: boolean, path: string): string {
  if (!Number.isFinite(n)) throw new Error(`${path}: TOML cannot hold ${n} here`);
  const text = String(n);
  if (!float && Number.isInteger(n)) return text;
  return /[.eE]/.test(text) ? text : `${text}.0`;
}

function inlineValue(v: TomlValue, path: string, floats: ReadonlySet<string>): string {
  if (typeof v === 'string') return tomlString(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return tomlNumber(v, floats.has(path), path);
  if (Array.isArray(v)) return `[${(v as readonly TomlValue[]).map((x) => inlineValue(x, path, floats)).join(', ')}]`;
  if (isTable(v))
    return `{ ${Object.entries(v)
      .filter(([, x]) => x !== null && x !== undefined)
      .map(([k, x]) => `${tomlKey(k)} = ${inlineValue(x, `${path}.${k}`, floats)}`)
      .join(', ')} }`;
  throw new Error(`${path}: no TOML value for ${String(v)}`);
}

function tableLines(table: TomlTable, path: readonly string[], floats: ReadonlySet<string>, out: string[]): void {
  const entries = Object.entries(table).filter(([, v]) => v !== null && v !== undefined);
  const scalars = entries.filter(([, v]) => !isTable(v));
  const tables = entries.filter(([, v]) => isTable(v));
  if (path.length > 0) out.push('', `[${path.map(tomlKey).join('.')}]`);
  for (const [k, v] of scalars) out.push(`${tomlKey(k)} = ${inlineValue(v, [...path, k].join('.'), floats)}`);
  for (const [k, v] of tables) tableLines(v as TomlTable, [...path, k], floats, out);
}

/** The document, with `comment` lines (`# ...`) first. */
export function tomlDocument(table: TomlTable, options: { floats?: ReadonlySet<string>; comment?: readonly string[] } = {}): string {
  const out: string[] = (options.comment ?? []).map((l) => (l ? `# ${l}` : '#'));
  tableLines(table, [], options.floats ?? new Set(), out);
  return `${out.join('\n')}\n`;
}
