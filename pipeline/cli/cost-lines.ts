import { formatUsd, unrecordedNote, type CostFigures, type MonthCosts } from '../concepts/task-costs.js';
import { textTable } from '../text-table.js';

const minutes = (m: number) => m.toFixed(2);

/** `perfmine status --month`'s lines about what the month's tasks cost (pipeline/concepts/task-costs.ts). Pure. */
export function costLines(c: MonthCosts): string[] {
  const row = (label: string, f: CostFigures) => [
    label,
    minutes(f.buildMinutes),
    minutes(f.measureMinutes),
    minutes(f.replayMinutes),
    minutes(f.machineMinutes),
    formatUsd(f.llmUsd),
  ];
  const rows = [row(`all work of ${c.month} (${c.candidates} candidates, ${c.commits} base commits)`, c.total)];
  if (c.perEmittedTask) rows.push(row(`per emitted task (the total / ${c.emitted})`, c.perEmittedTask));
  if (c.directPerTask) rows.push(row('direct, per task (mean of its own)', c.directPerTask));
  for (const t of c.tasks) rows.push(row(`  ${t.instanceId}${t.sharedBy > 1 ? ` (builds shared by ${t.sharedBy})` : ''}`, t));
  const table = textTable(['cost', 'builds', 'measurement', 'replays', 'machine min', 'LLM'], rows, {
    alignRight: (column) => column > 0,
  });
  const unrecorded = unrecordedNote(c);
  return [
    `what ${c.month}'s tasks cost: machine minutes (wall time of recorded container work) and LLM dollars; ${c.emitted} task${c.emitted === 1 ? '' : 's'} emitted`,
    ...table.map((l) => `  ${l}`),
    '  LLM answers served from the cache cost $0; builds of a base commit are shared equally by the candidates built on it',
    ...(unrecorded ? [`  ${unrecorded}`] : []),
  ];
}
