import { describe, expect, it } from 'vitest';
import {
  compareResultSets,
  formatCompareReport,
  isChanged,
  parseBenchmarksFile,
  parseResultsFile,
  resultSetOf,
  type CompareReport,
  type Mark,
} from '../../../pipeline/concepts/asv/index.js';
import { NETWORKX_BASE, NETWORKX_DIR, NETWORKX_HEAD, readReference, RICH_DIR } from './reference.js';

interface PrintedRow {
  mark: Mark;
  before: string;
  after: string;
  ratio: string;
  name: string;
}

/** The rows of every table in text printed by `asv compare` (header and separator lines skipped). */
function parsePrintedTables(text: string): PrintedRow[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !line.startsWith('| Change') && !line.startsWith('|---'))
    .map((line) => {
      const cells = line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
      expect(cells).toHaveLength(5);
      const [mark, before, after, ratio, name] = cells as [string, string, string, string, string];
      return { mark: (mark === '' ? ' ' : mark) as Mark, before, after, ratio, name };
    });
}

function load(path: string) {
  return resultSetOf(parseResultsFile(readReference(path), path));
}

function benchmarksAt(path: string) {
  return parseBenchmarksFile(readReference(path), path);
}

/** What real asv printed, without the `exit 0` line the capture script appended. */
function printed(path: string): string {
  return readReference(path).replace(/exit 0\n?$/, '');
}

function expectSameMarks(report: CompareReport, rows: PrintedRow[], onlyChanged: boolean): void {
  const mine = onlyChanged ? report.rows.filter(isChanged) : report.rows;
  expect(mine.map((r) => r.name).sort()).toEqual(rows.map((r) => r.name).sort());
  for (const row of rows) {
    const r = mine.find((m) => m.name === row.name)!;
    expect(r.verdict.mark, row.name).toBe(row.mark);
    expect(r.verdict.tilde, row.name).toBe(row.ratio.startsWith('~'));
  }
}

describe('perfmine compare against real asv compare: networkx #7971', () => {
  const report = compareResultSets([load(NETWORKX_BASE)], [load(NETWORKX_HEAD)], {
    benchmarks: benchmarksAt(`${NETWORKX_DIR}benchmarks.json`),
  });
  const names = { baseName: 'networkx-3.5rc0~10', headName: 'networkx-3.5rc0~9' };

  it('gives the marks asv printed in compare.txt, name by name', () => {
    const rows = parsePrintedTables(printed(`${NETWORKX_DIR}compare.txt`));
    expect(rows).toHaveLength(28);
    expectSameMarks(report, rows, false);
    expect(rows.filter((r) => r.mark === '-')).toHaveLength(4);
  });

  it('gives the rows asv printed in compare_only_changed.txt', () => {
    const rows = parsePrintedTables(printed(`${NETWORKX_DIR}compare_only_changed.txt`));
    expect(rows).toHaveLength(4);
    expectSameMarks(report, rows, true);
  });

  it('prints the same values and ratios, in the same order', () => {
    const rows = parsePrintedTables(printed(`${NETWORKX_DIR}compare.txt`));
    const text = formatCompareReport(report);
    expect(parsePrintedTables(text)).toEqual(rows);
  });

  it.each([
    ['compare.txt', {}],
    ['compare_only_changed.txt', { onlyChanged: true }],
    ['compare_split.txt', { split: true }],
  ] as const)('reproduces %s byte for byte (given the commit names asv took from git)', (file, options) => {
    expect(formatCompareReport(report, { ...names, ...options })).toBe(printed(`${NETWORKX_DIR}${file}`));
  });
});

describe.each(['r2x2', 'r4x4'])('perfmine compare against real asv compare: rich #3399 %s', (protocol) => {
  const dir = `${RICH_DIR}${protocol}/`;
  const benchmarks = benchmarksAt(`${dir}ab/benchmarks.json`);
  const ab = compareResultSets(
    [load(`${dir}ab/349042fd-existing-py_usr_bin_python3.json`)],
    [load(`${dir}ab/577def22-existing-py_usr_bin_python3.json`)],
    { benchmarks },
  );
  const aa = compareResultSets(
    [load(`${dir}aa1/349042fd-existing-py_usr_bin_python3.json`)],
    [load(`${dir}aa2/349042fd-existing-py_usr_bin_python3.json`)],
    { benchmarks },
  );
  const names = { baseName: 'v13.8.0~54', headName: 'v13.8.0~53' };

  it('gives the marks asv printed for base vs expert and base vs base', () => {
    expectSameMarks(ab, parsePrintedTables(printed(`${dir}compare/asv_compare_ab.txt`)), false);
    expectSameMarks(aa, parsePrintedTables(printed(`${dir}compare/aa_print_table.txt`)), false);
  });

  it('reproduces the four printed files byte for byte', () => {
    expect(formatCompareReport(ab, names)).toBe(printed(`${dir}compare/asv_compare_ab.txt`));
    expect(formatCompareReport(ab, { ...names, split: true })).toBe(printed(`${dir}compare/asv_compare_ab_split.txt`));
    expect(formatCompareReport(aa)).toBe(printed(`${dir}compare/aa_print_table.txt`));
    expect(formatCompareReport(aa, { split: true })).toBe(printed(`${dir}compare/aa_print_table_split.txt`));
  });
});

describe('the README counts of flagged rows', () => {
  it('matches the table in rich-3399/README.md', () => {
    const count = (protocol: string, pair: 'ab' | 'aa') => {
      const dir = `${RICH_DIR}${protocol}/`;
      const report =
        pair === 'ab'
          ? compareResultSets(
              [load(`${dir}ab/349042fd-existing-py_usr_bin_python3.json`)],
              [load(`${dir}ab/577def22-existing-py_usr_bin_python3.json`)],
            )
          : compareResultSets(
              [load(`${dir}aa1/349042fd-existing-py_usr_bin_python3.json`)],
              [load(`${dir}aa2/349042fd-existing-py_usr_bin_python3.json`)],
            );
      return {
        improved: report.rows.filter((r) => r.verdict.mark === '-').length,
        worse: report.rows.filter((r) => r.verdict.mark === '+').length,
      };
    };
    expect(count('r2x2', 'ab')).toEqual({ improved: 2, worse: 0 });
    expect(count('r2x2', 'aa')).toEqual({ improved: 0, worse: 1 });
    expect(count('r4x4', 'ab')).toEqual({ improved: 0, worse: 15 });
    expect(count('r4x4', 'aa')).toEqual({ improved: 11, worse: 0 });
  });
});
