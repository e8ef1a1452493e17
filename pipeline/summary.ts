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
    for (const note of r.notes ?? []) lines.push(`    note: ${note}`);
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

const n = (x: number) => Math.round(x).toLocaleString('en-US');
const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/**
 * The run's costs in a few lines: LLM requests, tokens and cost; GitHub requests and the rate
 * limit left; Docker build and measurement time; tasks emitted. Lines whose metrics are all zero
 * are left out.
 */
export function formatMetrics(m: Readonly<Record<string, number>>): string {
  const get = (k: string) => m[k] ?? 0;
  const lines: string[] = [];
  if (get('llm.requests') + get('llm.cacheHits') > 0) {
    const unpriced =
      get('llm.unpricedRequests') > 0 ? ` (${n(get('llm.unpricedRequests'))} requests to models without a price in llm.prices)` : '';
    lines.push(
      `LLM: ${n(get('llm.requests'))} requests, ${n(get('llm.cacheHits'))} answers from the cache; ${n(get('llm.promptTokens'))} prompt + ${n(get('llm.completionTokens'))} completion tokens; $${get('llm.costUsd').toFixed(4)}${unpriced}`,
    );
  }
  if (get('github.requests') > 0) {
    const remaining = m['github.rateRemaining'] === undefined ? '' : `; rate limit left ${n(get('github.rateRemaining'))}`;
    lines.push(
      `GitHub: ${n(get('github.requests'))} requests, ${n(get('github.conditional'))} conditional, ${n(get('github.notModified'))} answered 304 (free)${remaining}`,
    );
  }
  if (get('docker.builds') + get('docker.measureMs') > 0) {
    lines.push(`Docker: ${n(get('docker.builds'))} builds in ${secs(get('docker.buildMs'))}; measuring ${secs(get('docker.measureMs'))}`);
  }
  if (m['emit.tasks'] !== undefined) lines.push(`tasks emitted: ${n(get('emit.tasks'))}`);
  return lines.join('\n');
}
