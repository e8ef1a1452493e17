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

export function formatTasks(tasks: readonly TaskListing[]): string {
  if (tasks.length === 0) return 'no tasks emitted';
  const header = ['instance_id', 'month', 'workloads', 'speedup (all / improved)', 'category', 'folder'];
  const rows = tasks.map((t) => [
    t.instance_id,
    t.month,
    `${t.improved}/${t.workloads} improved`,
    `${fmt(t.expert_speedup.all)} / ${fmt(t.expert_speedup.improved)}`,
    t.category ?? '-',
    t.written ? t.folder : `${t.folder} (not written yet)`,
  ]);
  return textTable(header, rows).join('\n');
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
    const tasks = emittedTasks(db, window, session.config.out);
    if (session.json) printJson({ db: path, exists: true, month: window?.label ?? null, out: session.config.out, tasks });
    else print(formatTasks(tasks));
    return 0;
  } finally {
    db.close();
  }
}
