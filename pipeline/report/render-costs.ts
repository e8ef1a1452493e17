import { COST_MODEL_NOTE, formatMinutes, formatUsd, unrecordedNote, type CostFigures, type MonthCosts } from '../concepts/task-costs.js';

/**
 * The report's section on what the month's tasks cost (pipeline/concepts/task-costs.ts): the
 * month's total, per emitted task, the direct cost per task and each task's own. Pure; cells carry
 * `data-*` attributes with the unrounded numbers.
 */

const esc = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const min = (m: number) => m.toFixed(2);

function cells(f: CostFigures): string {
  return [
    `<td class="num" data-col="builds" data-minutes="${f.buildMinutes}">${min(f.buildMinutes)}</td>`,
    `<td class="num" data-col="measurement" data-minutes="${f.measureMinutes}">${min(f.measureMinutes)}</td>`,
    `<td class="num" data-col="replays" data-minutes="${f.replayMinutes}">${min(f.replayMinutes)}</td>`,
    `<td class="num" data-col="machine" data-minutes="${f.machineMinutes}">${min(f.machineMinutes)}</td>`,
    `<td class="num" data-col="llm" data-usd="${f.llmUsd}">${formatUsd(f.llmUsd)}</td>`,
  ].join('');
}

/** The summary card's figure: machine minutes and dollars per emitted task. */
export function costCardHtml(c: MonthCosts | null | undefined): string {
  if (!c?.perEmittedTask) return '';
  return `<div class="card" id="card-cost-per-task" data-minutes="${c.perEmittedTask.machineMinutes}" data-usd="${c.perEmittedTask.llmUsd}"><b>${formatMinutes(c.perEmittedTask.machineMinutes)}, ${formatUsd(c.perEmittedTask.llmUsd)}</b>per emitted task</div>`;
}

export function taskCostsHtml(c: MonthCosts | null | undefined): string {
  if (!c) return '';
  const row = (id: string, label: string, f: CostFigures) => `<tr data-row="${esc(id)}"><td>${label}</td>${cells(f)}</tr>`;
  const rows = [row('total', `all work of the month (${c.candidates} candidates, ${c.commits} base commits)`, c.total)];
  if (c.perEmittedTask) rows.push(row('per-emitted-task', `per emitted task (the total / ${c.emitted})`, c.perEmittedTask));
  if (c.directPerTask) rows.push(row('direct-per-task', 'direct, per task (mean of its own)', c.directPerTask));
  const taskRows = c.tasks.map((t) =>
    row(t.instanceId, `<code>${esc(t.instanceId)}</code>${t.sharedBy > 1 ? ` (builds shared by ${t.sharedBy})` : ''}`, t),
  );
  const head =
    '<thead><tr><th></th><th class="num">builds (min)</th><th class="num">measurement (min)</th><th class="num">replays (min)</th><th class="num">machine (min)</th><th class="num">LLM</th></tr></thead>';
  const code = (text: string) => esc(text).replace(/`([^`]+)`/g, '<code>$1</code>');
  const unrecorded = unrecordedNote(c);
  return `<h2>What the tasks cost</h2>
<p>${code(COST_MODEL_NOTE)}</p>${unrecorded ? `\n<p id="task-costs-unrecorded" data-count="${c.unrecorded}">${code(unrecorded)}.</p>` : ''}
<table id="task-costs" data-emitted="${c.emitted}">
${head}
<tbody>
${rows.join('\n')}
</tbody>
</table>
${taskRows.length > 0 ? `<table id="task-costs-per-task">\n${head}\n<tbody>\n${taskRows.join('\n')}\n</tbody>\n</table>` : '<p>No task emitted for this month: there is no per-task figure.</p>'}`;
}
