import type { MonthCosts } from '../concepts/task-costs.js';
import { costCardHtml, taskCostsHtml } from './render-costs.js';
import { measurementTimeHtml, type ReportAccount } from './render-account.js';

/**
 * The monthly report as one static HTML page: no script, no network, charts as inline SVG.
 * Pure: data in, text out. Chart elements carry `data-*` attributes with their numbers so that a
 * browser test can check what was drawn.
 */

export const FUNNEL_COLUMNS = ['collected', 'filtered', 'classified', 'built', 'validated', 'emitted'] as const;
export type FunnelColumn = (typeof FUNNEL_COLUMNS)[number];

const COLUMN_TITLES: Record<FunnelColumn, string> = {
  collected: 'merged PRs collected',
  filtered: 'passed the rule filter',
  classified: 'judged performance work',
  built: 'environment verified',
  validated: 'measured improvement',
  emitted: 'tasks emitted',
};

export interface RepoFunnel {
  readonly repo: string;
  readonly counts: Readonly<Record<FunnelColumn, number>>;
}

export interface StageDrops {
  readonly stage: string;
  readonly done: number;
  readonly dropped: Readonly<Record<string, number>>;
  readonly failed: Readonly<Record<string, number>>;
  readonly pending: number;
  /** Passed on by the stage before it and not planned by this one yet (see `perfmine status`). */
  readonly waiting?: number;
}

/** Where the month's latest run stopped and why (a configuration problem, with its fix). */
export interface ReportStop {
  readonly runId: number;
  readonly stage: string;
  readonly reason: string;
  readonly issues: readonly string[];
  readonly fix: string | null;
}

export interface StageCost {
  readonly stage: string;
  readonly durationMs: number;
  readonly llmRequests: number;
  readonly llmTokens: number;
  readonly llmCostUsd: number;
}

export interface ReportTask {
  readonly instanceId: string;
  readonly repo: string;
  readonly pullNumber: number;
  readonly title: string;
  /** Geometric mean of base/expert over all workloads. */
  readonly speedup: number | null;
  /** Geometric mean over the improved workloads. */
  readonly improvedSpeedup: number | null;
  readonly workloads: number;
  readonly improvedWorkloads: number;
  readonly category: string | null;
  readonly difficulty: string | null;
  /** Relative link from the report to the task's folder. */
  readonly folder: string;
  /** Its replays (`perfmine replay`) and the publish gate's decision; absent: not shown. */
  readonly replays?: ReportReplays;
}

export interface ReportReplays {
  readonly count: number;
  readonly replicates: number;
  readonly doesNotReplicate: number;
  readonly inconclusive: number;
  readonly failed: number;
  readonly machines: readonly string[];
  /** Per judged workload: in how many replays it replicated, of those that judged it. */
  readonly workloads: readonly { readonly name: string; readonly replicated: number; readonly judged: number }[];
  readonly published: boolean;
  readonly gateReason: string | null;
  readonly gateDetail: string;
}

export interface ReportData {
  readonly month: string;
  readonly generatedAt: string;
  readonly funnel: readonly RepoFunnel[];
  readonly stages: readonly StageDrops[];
  readonly costs: readonly StageCost[];
  readonly tasks: readonly ReportTask[];
  /** The month's latest run stopped before its end: why nothing passed the stages after it. */
  readonly stop?: ReportStop | null;
  /** What the month's tasks cost: machine minutes and LLM dollars, per emitted task and in total. */
  readonly taskCosts?: MonthCosts | null;
  /** Where the month's measurements (validate, engine perfmine) spent their time, per candidate. */
  readonly measurementTime?: readonly ReportAccount[];
}

/** A task's replay cells: replays by verdict, their machines, the replicated workloads, and the gate's decision. */
function replayCells(r: ReportReplays | undefined): string {
  if (!r) return '<td>–</td><td>–</td><td>–</td><td>–</td>';
  const verdicts = [
    `${r.replicates} replicate`,
    r.doesNotReplicate > 0 ? `${r.doesNotReplicate} do not` : null,
    r.inconclusive > 0 ? `${r.inconclusive} inconclusive` : null,
    r.failed > 0 ? `${r.failed} failed` : null,
  ].filter(Boolean);
  return [
    `<td data-col="replays" data-count="${r.count}" data-replicates="${r.replicates}">${r.count === 0 ? 'none' : `${r.count}: ${escapeHtml(verdicts.join(', '))}`}</td>`,
    `<td data-col="machines">${r.machines.map(escapeHtml).join('<br>') || '–'}</td>`,
    `<td data-col="replicated">${r.workloads.map((w) => `${escapeHtml(w.name)} (${w.replicated}/${w.judged})`).join('<br>') || '–'}</td>`,
    `<td data-col="publish" data-published="${r.published}" title="${escapeHtml(r.gateDetail)}">${r.published ? 'published' : `left out: ${escapeHtml(r.gateReason ?? '')}`}</td>`,
  ].join('');
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const fmt = (x: number) => x.toLocaleString('en-US');
const fmtRatio = (x: number | null) => (x === null ? '–' : `${x.toFixed(2)}×`);

export interface Bin {
  readonly label: string;
  readonly count: number;
}

/** Speedup bins on a ratio scale (below 1 means slower). */
export const SPEEDUP_EDGES = [1, 1.1, 1.25, 1.5, 2, 5, 10] as const;

export function speedupBins(speedups: readonly number[]): Bin[] {
  const labels = ['< 1', '1–1.1', '1.1–1.25', '1.25–1.5', '1.5–2', '2–5', '5–10', '≥ 10'];
  const counts = new Array<number>(labels.length).fill(0);
  for (const s of speedups) {
    let i = SPEEDUP_EDGES.findIndex((edge) => s < edge);
    if (i === -1) i = SPEEDUP_EDGES.length;
    counts[i]! += 1;
  }
  return labels.map((label, i) => ({ label, count: counts[i]! }));
}

export function workloadBins(counts: readonly number[]): Bin[] {
  const edges = [2, 3, 5, 10, 20, 50];
  const labels = ['1', '2', '3–4', '5–9', '10–19', '20–49', '≥ 50'];
  const out = new Array<number>(labels.length).fill(0);
  for (const c of counts) {
    let i = edges.findIndex((edge) => c < edge);
    if (i === -1) i = edges.length;
    out[i]! += 1;
  }
  return labels.map((label, i) => ({ label, count: out[i]! }));
}

/** A vertical bar chart of bins. */
export function histogramSvg(id: string, title: string, bins: readonly Bin[]): string {
  const width = 520;
  const height = 220;
  const left = 36;
  const bottom = 40;
  const top = 40;
  const max = Math.max(1, ...bins.map((b) => b.count));
  const slot = (width - left - 10) / bins.length;
  const bars = bins
    .map((b, i) => {
      const h = ((height - top - bottom) * b.count) / max;
      const x = left + i * slot + 4;
      const y = height - bottom - h;
      return [
        `<rect class="bar" data-label="${escapeHtml(b.label)}" data-count="${b.count}" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(slot - 8).toFixed(1)}" height="${h.toFixed(1)}"><title>${escapeHtml(b.label)}: ${b.count}</title></rect>`,
        b.count > 0
          ? `<text class="value" x="${(x + (slot - 8) / 2).toFixed(1)}" y="${(y - 4).toFixed(1)}" text-anchor="middle">${b.count}</text>`
          : '',
        `<text class="tick" x="${(x + (slot - 8) / 2).toFixed(1)}" y="${height - bottom + 16}" text-anchor="middle">${escapeHtml(b.label)}</text>`,
      ].join('');
    })
    .join('\n');
  return `<svg id="${id}" data-chart="${id}" role="img" aria-label="${escapeHtml(title)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">
<text class="chart-title" x="${left}" y="16">${escapeHtml(title)}</text>
<line x1="${left}" y1="${height - bottom}" x2="${width - 6}" y2="${height - bottom}" class="axis"/>
${bars}
</svg>`;
}

/** Horizontal bars, one per funnel column, with the totals over all repositories. */
export function funnelSvg(totals: Readonly<Record<FunnelColumn, number>>): string {
  const width = 620;
  const row = 28;
  const label = 190;
  const height = FUNNEL_COLUMNS.length * row + 16;
  const max = Math.max(1, ...FUNNEL_COLUMNS.map((c) => totals[c]));
  const bars = FUNNEL_COLUMNS.map((c, i) => {
    const w = ((width - label - 60) * totals[c]) / max;
    const y = 8 + i * row;
    return `<text class="tick" x="${label - 8}" y="${y + 17}" text-anchor="end">${COLUMN_TITLES[c]}</text><rect class="bar" data-stage="${c}" data-count="${totals[c]}" x="${label}" y="${y}" width="${w.toFixed(1)}" height="${row - 8}"/><text class="value" x="${(label + w + 6).toFixed(1)}" y="${y + 17}">${fmt(totals[c])}</text>`;
  }).join('\n');
  return `<svg id="funnel-chart" data-chart="funnel" role="img" aria-label="funnel" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">\n${bars}\n</svg>`;
}

export function funnelTotals(funnel: readonly RepoFunnel[]): Record<FunnelColumn, number> {
  const totals = Object.fromEntries(FUNNEL_COLUMNS.map((c) => [c, 0])) as Record<FunnelColumn, number>;
  for (const r of funnel) for (const c of FUNNEL_COLUMNS) totals[c] += r.counts[c];
  return totals;
}

function reasons(counts: Readonly<Record<string, number>>): string {
  const entries = Object.entries(counts).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  return entries.length === 0 ? '–' : entries.map(([r, n]) => `<code>${escapeHtml(r)}</code> ${n}`).join(', ');
}

const median = (xs: readonly number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export function renderReport(data: ReportData): string {
  const totals = funnelTotals(data.funnel);
  const speedups = data.tasks.map((t) => t.speedup).filter((s): s is number => s !== null);
  const cost = data.costs.reduce((a, c) => a + c.llmCostUsd, 0);
  const time = data.costs.reduce((a, c) => a + c.durationMs, 0);
  const funnelRows = [...data.funnel]
    .sort((a, b) => b.counts.emitted - a.counts.emitted || b.counts.collected - a.counts.collected || a.repo.localeCompare(b.repo))
    .map(
      (r) =>
        `<tr data-repo="${escapeHtml(r.repo)}"><td>${escapeHtml(r.repo)}</td>${FUNNEL_COLUMNS.map((c) => `<td class="num" data-col="${c}">${fmt(r.counts[c])}</td>`).join('')}</tr>`,
    )
    .join('\n');
  const stageRows = data.stages
    .map(
      (s) =>
        `<tr data-stage="${escapeHtml(s.stage)}"><td>${escapeHtml(s.stage)}</td><td class="num">${fmt(s.done)}</td><td>${reasons(s.dropped)}</td><td>${reasons(s.failed)}</td><td class="num">${fmt(s.pending)}</td><td class="num">${fmt(s.waiting ?? 0)}</td></tr>`,
    )
    .join('\n');
  const stop = data.stop
    ? `<div id="stopped" class="stopped" data-stage="${escapeHtml(data.stop.stage)}" data-reason="${escapeHtml(data.stop.reason)}"><p><b>The latest run of ${escapeHtml(data.month)} (#${data.stop.runId}) stopped at ${escapeHtml(data.stop.stage)} (${escapeHtml(data.stop.reason)})</b>: no item went through ${escapeHtml(data.stop.stage)} or the stages after it in that run, which is why the funnel ends there.</p>${data.stop.issues.map((i) => `<p><code>${escapeHtml(i)}</code></p>`).join('')}${data.stop.fix ? `<p>What to do: ${escapeHtml(data.stop.fix)}</p>` : ''}</div>`
    : '';
  const costRows = data.costs
    .map(
      (c) =>
        `<tr data-stage="${escapeHtml(c.stage)}"><td>${escapeHtml(c.stage)}</td><td class="num">${(c.durationMs / 1000).toFixed(1)} s</td><td class="num">${fmt(c.llmRequests)}</td><td class="num">${fmt(c.llmTokens)}</td><td class="num">$${c.llmCostUsd.toFixed(4)}</td></tr>`,
    )
    .join('\n');
  const taskRows = data.tasks
    .map(
      (t) =>
        `<tr data-task="${escapeHtml(t.instanceId)}"><td><a href="${escapeHtml(t.folder)}">${escapeHtml(t.instanceId)}</a></td><td>${escapeHtml(t.title)}</td><td class="num" data-speedup="${t.speedup ?? ''}">${fmtRatio(t.speedup)}</td><td class="num">${fmtRatio(t.improvedSpeedup)}</td><td class="num">${t.improvedWorkloads} / ${t.workloads}</td><td>${escapeHtml(t.category ?? '–')}</td><td>${escapeHtml(t.difficulty ?? '–')}</td>${replayCells(t.replays)}</tr>`,
    )
    .join('\n');
  const med = median(speedups);

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>perfmine ${escapeHtml(data.month)}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #1b1f24; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2rem; font-size: 1.15rem; }
.sub { color: #57606a; }
.cards { display: flex; gap: 1rem; flex-wrap: wrap; margin: 1rem 0; }
.card { border: 1px solid #d0d7de; border-radius: 6px; padding: .6rem 1rem; min-width: 9rem; }
.card b { display: block; font-size: 1.4rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
th, td { border-bottom: 1px solid #d0d7de; padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
svg .bar { fill: #2f81f7; } svg .axis { stroke: #57606a; } svg text { font: 11px system-ui, sans-serif; fill: #1b1f24; }
svg .chart-title { font-weight: 600; font-size: 12px; }
.charts { display: flex; gap: 2rem; flex-wrap: wrap; }
code { background: #f6f8fa; padding: 0 .2rem; border-radius: 3px; }
.stopped { border: 1px solid #d4a72c; background: #fff8c5; border-radius: 6px; padding: .2rem 1rem; margin: .5rem 0; }
</style>
</head>
<body>
<h1>perfmine: ${escapeHtml(data.month)}</h1>
<p class="sub">Pull requests merged in ${escapeHtml(data.month)} (UTC, [start, end) on merged_at). Generated ${escapeHtml(data.generatedAt)}.</p>
<div class="cards">
<div class="card" id="card-tasks"><b>${fmt(totals.emitted)}</b>tasks emitted</div>
<div class="card" id="card-repos"><b>${fmt(data.funnel.length)}</b>repositories</div>
<div class="card" id="card-candidates"><b>${fmt(totals.classified)}</b>performance candidates</div>
<div class="card" id="card-speedup"><b>${fmtRatio(med)}</b>median expert speedup</div>
<div class="card" id="card-cost"><b>$${cost.toFixed(2)}</b>LLM cost</div>
<div class="card" id="card-time"><b>${(time / 60_000).toFixed(1)} min</b>stage time</div>
${costCardHtml(data.taskCosts)}
</div>

<h2>Funnel</h2>
${funnelSvg(totals)}
<table id="funnel">
<thead><tr><th>repository</th>${FUNNEL_COLUMNS.map((c) => `<th class="num">${COLUMN_TITLES[c]}</th>`).join('')}</tr></thead>
<tbody>
${funnelRows}
</tbody>
<tfoot><tr data-repo="(all)"><th>all repositories</th>${FUNNEL_COLUMNS.map((c) => `<th class="num" data-col="${c}">${fmt(totals[c])}</th>`).join('')}</tr></tfoot>
</table>

<h2>Decisions by stage</h2>
${stop}
<table id="stages">
<thead><tr><th>stage</th><th class="num">passed</th><th>dropped, by reason</th><th>failed, by reason</th><th class="num">pending</th><th class="num">waiting, not planned yet</th></tr></thead>
<tbody>
${stageRows}
</tbody>
</table>

<h2>Expert speedups and workloads</h2>
<div class="charts">
${histogramSvg('speedup-chart', 'Expert speedup per task (geometric mean over workloads)', speedupBins(speedups))}
${histogramSvg('workload-chart', 'Workloads per task', workloadBins(data.tasks.map((t) => t.workloads)))}
</div>

<h2>Cost and time per stage</h2>
<table id="costs">
<thead><tr><th>stage</th><th class="num">time</th><th class="num">LLM requests</th><th class="num">LLM tokens</th><th class="num">LLM cost</th></tr></thead>
<tbody>
${costRows}
</tbody>
</table>

${taskCostsHtml(data.taskCosts)}

${measurementTimeHtml(data.measurementTime)}

<h2>Emitted tasks</h2>
<table id="tasks">
<thead><tr><th>task</th><th>pull request</th><th class="num">speedup</th><th class="num">on improved</th><th class="num">improved / workloads</th><th>category</th><th>difficulty</th><th>replays</th><th>machines</th><th>replicated workloads</th><th>publish</th></tr></thead>
<tbody>
${taskRows || '<tr><td colspan="11">no task emitted for this month</td></tr>'}
</tbody>
</table>
</body>
</html>
`;
}
