import type { Section } from './compare.js';
import { interquartileError } from './compute-stats.js';
import { humanValue } from './human-value.js';
import type { CompareReport, CompareRow } from './result-set.js';
import type { Measurement } from './compare.js';
import { formatGithubTable } from './table.js';

/** How to print a comparison, as `asv compare`'s flags. */
export interface FormatCompareOptions {
  /** One table per change group (improved, unchanged, worse, not comparable), as `--split`. */
  readonly split?: boolean;
  /** Only rows marked `-`, `+`, `!` or `*`, without titles, as `--only-changed`. */
  readonly onlyChanged?: boolean;
  /** Names shown after the hashes in the headers (asv prints `<git describe>`), when known. */
  readonly baseName?: string;
  readonly headName?: string;
}

const TITLES: Record<Section | 'all', string> = {
  all: 'All benchmarks:',
  improved: 'Benchmarks that have improved:',
  unchanged: 'Benchmarks that have stayed the same:',
  worsened: 'Benchmarks that have got worse:',
  incomparable: 'Benchmarks that are not comparable:',
};

const SPLIT_ORDER: readonly Section[] = ['improved', 'unchanged', 'worsened', 'incomparable'];

/** Whether `--only-changed` keeps a row: asv drops unchanged (` `) and incomparable (`x`) rows. */
export function isChanged(row: CompareRow): boolean {
  return row.verdict.mark !== ' ' && row.verdict.mark !== 'x';
}

function displayValue(m: Measurement | undefined, unit: string | null): string {
  if (m === undefined) return humanValue(Number.NaN, unit);
  const err =
    m.stats && m.stats.q25 !== undefined && m.stats.q75 !== undefined ? interquartileError({ q25: m.stats.q25, q75: m.stats.q75 }) : null;
  return humanValue(m.value, unit, err);
}

/** The five cells asv prints for a row: mark, before, after, ratio, benchmark. */
export function rowCells(row: CompareRow, multipleEnvironments: boolean): string[] {
  const name = multipleEnvironments ? `${row.name} [${row.machineEnv}]` : row.name;
  return [row.verdict.mark, displayValue(row.before, row.unit), displayValue(row.after, row.unit), row.verdict.ratioText, name];
}

/**
 * The text `asv compare` prints for a comparison: a blank line, a title and a blank line before
 * each table (not with `onlyChanged`), then a tabulate "github" table with the columns Change,
 * Before [hash], After [hash], Ratio, Benchmark (Parameter).
 */
export function formatCompareReport(report: CompareReport, options: FormatCompareOptions = {}): string {
  const rows = options.onlyChanged ? report.rows.filter(isChanged) : report.rows;
  const groups: [Section | 'all', CompareRow[]][] = options.split
    ? SPLIT_ORDER.map((s) => [s, rows.filter((r) => r.verdict.section === s)])
    : [['all', [...rows]]];
  const label = (name: string | undefined) => (name ? `<${name}>` : '');
  const headers = [
    'Change',
    `Before [${report.baseCommit.slice(0, 8)}] ${label(options.baseName)}`,
    `After [${report.headCommit.slice(0, 8)}] ${label(options.headName)}`,
    'Ratio',
    'Benchmark (Parameter)',
  ];
  let out = '';
  for (const [key, group] of groups) {
    if (group.length === 0) continue;
    if (!options.onlyChanged) out += `\n${TITLES[key]}\n\n`;
    out += `${formatGithubTable(
      headers,
      group.map((r) => rowCells(r, report.multipleEnvironments)),
    )}\n`;
  }
  return out;
}
