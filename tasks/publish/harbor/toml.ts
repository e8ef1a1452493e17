import { stringify } from 'smol-toml';

/**
 * A TOML 1.0 document from plain data, for Harbor's task.toml, written by smol-toml: the root's
 * keys first, then one `[table]` per nested object (keys in the order given); a key whose value is
 * null or undefined is left out. A whole number is an integer unless its dotted path is in
 * `floats` (then written with a decimal point, as Harbor's documentation writes timeouts). Pure.
 */

export type TomlValue = string | number | boolean | readonly TomlValue[] | TomlTable | null | undefined;
export interface TomlTable {
  readonly [key: string]: TomlValue;
}

/**
 * smol-toml writes every whole number as an integer or every one as a float (`numbersAsFloat`):
 * the keys in `floats` get their decimal point here, on the lines it wrote (a `[table]` header,
 * then one `key = value` a line; strings are always quoted, so a bare integer is a number). Keys
 * of tables, bare keys only.
 */
function markFloats(text: string, floats: ReadonlySet<string>): string {
  let table = '';
  return text
    .split('\n')
    .map((line) => {
      const header = /^\[\[?([^\]]+)\]\]?$/.exec(line);
      if (header) {
        table = header[1]!;
        return line;
      }
      const m = /^([A-Za-z0-9_-]+) = (-?\d+)$/.exec(line);
      return m && floats.has(table ? `${table}.${m[1]!}` : m[1]!) ? `${line}.0` : line;
    })
    .join('\n');
}

/** The document, with `comment` lines (`# ...`) first. */
export function tomlDocument(table: TomlTable, options: { floats?: ReadonlySet<string>; comment?: readonly string[] } = {}): string {
  const comment = (options.comment ?? []).map((l) => (l ? `# ${l}\n` : '#\n')).join('');
  const floats = options.floats ?? new Set<string>();
  const text = stringify(table);
  return comment + (floats.size > 0 ? markFloats(text, floats) : text);
}
