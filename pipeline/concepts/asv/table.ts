import { formatGeneral } from './py-format.js';

/**
 * The `tabulate(rows, headers, tablefmt="github")` layout that asv compare prints, for string
 * cells: a column whose every cell reads as a number is numeric (reformatted with `format(x,
 * 'g')` when not all integers, aligned on the decimal point, header flush right); any other
 * column is text (cells stripped, flush left). Widths are the widest cell or the header plus 2.
 */

type ColumnType = 'int' | 'float' | 'str';

const PY_INT = /^\s*[+-]?\d(?:_?\d)*\s*$/;
const PY_FLOAT = /^\s*[+-]?(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?\s*$/;
const PY_SPECIAL = /^\s*[+-]?(?:inf|infinity|nan)\s*$/i;

function pyFloat(s: string): number {
  return Number(
    s
      .trim()
      .replaceAll('_', '')
      .replace(/^([+-]?)infinity$/i, '$1Infinity')
      .replace(/^([+-]?)inf$/i, '$1Infinity'),
  );
}

/** tabulate's `_isnumber`: Python's float() accepts it, and it is finite or literally inf / -inf / nan. */
function isNumber(s: string): boolean {
  if (PY_SPECIAL.test(s)) return ['inf', '-inf', 'nan'].includes(s.toLowerCase());
  if (!PY_FLOAT.test(s)) return false;
  return Number.isFinite(pyFloat(s)) || ['inf', '-inf', 'nan'].includes(s.toLowerCase());
}

function cellType(s: string): ColumnType {
  if (s === 'True' || s === 'False') return 'str'; // bool; never produced here, treated as text
  if (PY_INT.test(s)) return 'int';
  if (isNumber(s)) return 'float';
  return 'str';
}

function columnType(cells: readonly string[]): ColumnType {
  let t: ColumnType = 'int';
  for (const c of cells) {
    const ct = cellType(c);
    if (ct === 'str') return 'str';
    if (ct === 'float') t = 'float';
  }
  return t;
}

/** Characters after the decimal point (or the exponent mark), -1 without one (tabulate's `_afterpoint`). */
function afterPoint(s: string): number {
  if (!isNumber(s)) return -1;
  if (PY_INT.test(s)) return -1;
  let pos = s.lastIndexOf('.');
  if (pos < 0) pos = s.toLowerCase().lastIndexOf('e');
  return pos >= 0 ? s.length - pos - 1 : -1;
}

function width(s: string): number {
  return [...s].length;
}

function padLeft(s: string, w: number): string {
  return ' '.repeat(Math.max(0, w - width(s))) + s;
}

function padRight(s: string, w: number): string {
  return s + ' '.repeat(Math.max(0, w - width(s)));
}

const MIN_PADDING = 2;

/** Renders rows of string cells under headers in tabulate's github format. */
export function formatGithubTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const columns = headers.map((_, i) => rows.map((r) => r[i] ?? ''));
  const rendered = columns.map((cells, i) => {
    const type = columnType(cells);
    const header = headers[i]!;
    const minWidth = width(header) + MIN_PADDING;
    if (type === 'str') {
      const stripped = cells.map((c) => c.trim());
      const w = Math.max(minWidth, ...stripped.map(width));
      return { header: padRight(header, w), cells: stripped.map((c) => padRight(c, w)), width: w };
    }
    const formatted = type === 'float' ? cells.map((c) => formatGeneral(pyFloat(c))) : cells;
    const decimals = formatted.map(afterPoint);
    const maxDecimals = Math.max(...decimals);
    const aligned = formatted.map((c, j) => c + ' '.repeat(maxDecimals - decimals[j]!));
    const w = Math.max(minWidth, ...aligned.map(width));
    return { header: padLeft(header, w), cells: aligned.map((c) => padLeft(c, w)), width: w };
  });
  const line = (cells: readonly string[]) => `|${cells.map((c) => ` ${c} `).join('|')}|`;
  const out = [line(rendered.map((c) => c.header)), `|${rendered.map((c) => '-'.repeat(c.width + 2)).join('|')}|`];
  for (let j = 0; j < rows.length; j++) out.push(line(rendered.map((c) => c.cells[j]!)));
  return out.join('\n');
}
