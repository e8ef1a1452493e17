import { accountTotals, formatSeconds, sumTotals, type AccountTotals, type MeasurementAccount } from '../concepts/measurement-account.js';

/**
 * The report's section on where validate's measurements spent their time (issue 37; the parts
 * are pipeline/concepts/measurement-account.ts's): per measured candidate of the month and in
 * total, the wall time and its parts. Pure; cells carry `data-ms` with the unrounded numbers.
 */

export interface ReportAccount {
  /** The candidate (`owner/name#N`). */
  readonly key: string;
  /** Its outcome: kept, or the drop reason. */
  readonly decision: string;
  readonly account: MeasurementAccount;
}

const esc = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const COLUMNS: readonly { readonly id: string; readonly title: string; readonly ms: (t: AccountTotals) => number }[] = [
  { id: 'wall', title: 'measured', ms: (t) => t.wallMs },
  { id: 'setup', title: 'setup', ms: (t) => t.setupMs },
  { id: 'warmup', title: 'warm-up', ms: (t) => t.warmupMs },
  { id: 'samples', title: 'samples', ms: (t) => t.samplesMs },
  { id: 'selection', title: 'selection', ms: (t) => t.selectionMs },
  { id: 'overhead', title: 'overhead', ms: (t) => t.overheadMs },
  { id: 'batch-overhead', title: 'of which batches', ms: (t) => t.batchOverheadMs },
  { id: 'workers', title: 'of which worker processes', ms: (t) => t.workersMs },
  { id: 'driver', title: 'of which driver', ms: (t) => t.driverMs },
];

function cells(t: AccountTotals): string {
  return COLUMNS.map((c) => `<td class="num" data-col="${c.id}" data-ms="${c.ms(t)}">${esc(formatSeconds(c.ms(t)))}</td>`).join('');
}

export function measurementTimeHtml(accounts: readonly ReportAccount[] | undefined): string {
  if (!accounts || accounts.length === 0) return '';
  const totals = accounts.map((a) => accountTotals(a.account));
  const all = sumTotals(totals);
  const sideBySide =
    all.sideBySideMs > 0
      ? ` Side by side (harness.mode duet) ${esc(formatSeconds(all.sideBySideMs))} ran on two sides at once and counts in both.`
      : '';
  const rows = accounts.map(
    (a, i) => `<tr data-candidate="${esc(a.key)}"><td><code>${esc(a.key)}</code></td><td>${esc(a.decision)}</td>${cells(totals[i]!)}</tr>`,
  );
  return `<h2>Where the measurement time went</h2>
<p>validate's measurements with the harness, per candidate: setup (asv's setup, teardown and setup_cache), the warm-up before the samples, the timed samples, workload selection (the fingerprint pass), and the overhead: the batches' pipes and messages, starting the worker processes and importing the suite, and the driver's own time. The parts sum to the time measured (<code>perfmine status --stage validate --items</code> has each side and the heaviest workloads).${sideBySide}</p>
<table id="measurement-time">
<thead><tr><th>candidate</th><th>decision</th>${COLUMNS.map((c) => `<th class="num">${esc(c.title)}</th>`).join('')}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
<tfoot><tr data-candidate="(all)"><th>all ${accounts.length} measured</th><th></th>${cells(all)}</tr></tfoot>
</table>`;
}
