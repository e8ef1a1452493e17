import type { StageReport } from './runner.js';

/** Text table of stage reports: items in, reused, done, dropped (by reason), failed (by reason). */
export function formatReports(reports: readonly StageReport[]): string {
  const header = ['stage', 'in', 'reused', 'ran', 'done', 'dropped', 'failed'];
  const rows = reports.map((r) => [
    r.stage,
    String(r.planned),
    String(r.reused),
    r.wouldRun > 0 ? `(${r.wouldRun} would run)` : String(r.ran),
    String(r.done),
    String(sum(r.dropped)),
    String(sum(r.failed)),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const fmt = (cells: readonly string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const lines = [fmt(header)];
  for (const [i, r] of reports.entries()) {
    lines.push(fmt(rows[i]!));
    if (Object.keys(r.dropped).length > 0) lines.push(`    dropped: ${byReason(r.dropped)}`);
    if (Object.keys(r.failed).length > 0) lines.push(`    failed:  ${byReason(r.failed)}`);
    if (r.notStarted > 0) lines.push(`    not started (interrupted): ${r.notStarted}`);
  }
  return lines.join('\n');
}

export function byReason(counts: Readonly<Record<string, number>>): string {
  return Object.entries(counts)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
}

export function sum(counts: Readonly<Record<string, number>>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}
