import { checkDatabasePath } from '../../../cache/database-path.js';
import { openStore } from '../../../cache/store.js';
import { noteDb } from '../db-label.js';
import { textTable } from '../../text-table.js';
import { emittedTasks, type TaskListing } from '../../report/tasks.js';
import { resolveMonthFlag } from '../scope-options.js';
import { openSession, print, printJson, type GlobalFlags } from '../session.js';

export interface TasksFlags {
  readonly month?: string;
}

function fmt(x: number | null): string {
  return x === null ? 'n/a' : `${x.toFixed(2)}x`;
}

function replaysCell(r: TaskListing['replays']): string {
  if (r.count === 0) return r.stale > 0 ? `none (${r.stale} stale)` : 'none';
  const v = r.by_verdict;
  const rest = [
    v['does-not-replicate'] > 0 ? `${v['does-not-replicate']} do not` : null,
    v.inconclusive > 0 ? `${v.inconclusive} inconclusive` : null,
    v.failed > 0 ? `${v.failed} failed` : null,
  ].filter(Boolean);
  return `${v.replicates}/${r.count} replicate${rest.length > 0 ? ` (${rest.join(', ')})` : ''}, ${r.machines.length} machine${r.machines.length === 1 ? '' : 's'}`;
}

export function formatTasks(tasks: readonly TaskListing[]): string {
  if (tasks.length === 0) return 'no tasks emitted';
  const header = ['instance_id', 'month', 'workloads', 'speedup (all / improved)', 'category', 'replays', 'folder'];
  const rows = tasks.map((t) => [
    t.instance_id,
    t.month,
    `${t.improved}/${t.workloads} improved`,
    `${fmt(t.expert_speedup.all)} / ${fmt(t.expert_speedup.improved)}`,
    t.category ?? '-',
    `${replaysCell(t.replays)}; ${t.replays.published ? 'published' : `left out (${t.replays.gate_reason})`}`,
    t.written ? t.folder : `${t.folder} (not written yet)`,
  ]);
  const details = tasks.flatMap((t) =>
    t.replays.count === 0
      ? []
      : [
          `${t.instance_id}: replayed on ${t.replays.machines.join('; ')}; replicated: ${t.replays.workloads.map((w) => `${w.name} ${w.replicated}/${w.judged}`).join(', ') || 'none judged'}`,
        ],
  );
  return [...textTable(header, rows), ...(details.length > 0 ? ['', ...details] : [])].join('\n');
}

export function tasksCommand(flags: TasksFlags, globals: GlobalFlags): number {
  const session = openSession(globals);
  const window = resolveMonthFlag(flags.month);
  const path = session.config.db;
  const state = checkDatabasePath(path, 'read');
  if (state !== 'sqlite') {
    if (session.json) printJson({ db: path, exists: state === 'empty', month: window?.label ?? null, tasks: [] });
    else print(`${state === 'absent' ? `no database at ${path} yet` : `${path} is an empty file`}: nothing emitted.`);
    return 0;
  }
  if (!session.json) noteDb(path);
  const db = openStore(path, { readonly: true });
  try {
    const tasks = emittedTasks(db, window, session.config.out, session.config.emit.publish);
    if (session.json) printJson({ db: path, exists: true, month: window?.label ?? null, out: session.config.out, tasks });
    else print(formatTasks(tasks));
    return 0;
  } finally {
    db.close();
  }
}
