/**
 * A plain-text table: a header line, then one line per row, columns two spaces apart, each as wide
 * as its widest cell; text columns padded on the right (and trailing blanks trimmed), the columns
 * `alignRight` names padded on the left (counts). Pure.
 */
export function textTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  options: { readonly alignRight?: (column: number) => boolean } = {},
): string[] {
  const right = options.alignRight ?? (() => false);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (right(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}
