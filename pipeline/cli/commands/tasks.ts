import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ledger } from '../../../cache/ledger.js';
import { checkDatabasePath } from '../../../cache/database-path.js';
import { openStore } from '../../../cache/store.js';
import { noteDb } from '../db-label.js';
import { createLogger } from '../../logging.js';
import { monthTasks } from '../../../stages/emit/index.js';
import type { MonthTask } from '../../../stages/emit/month-files.js';
import { monthOf, monthsOf, type Window } from '../../window.js';
import { resolveMonthFlag } from '../scope-options.js';
import { openSession, print, printJson, type GlobalFlags } from '../session.js';

export interface TasksFlags {
  readonly month?: string;
}

export interface TaskListing {
  readonly instance_id: string;
  readonly repo: string;
  readonly pull_number: number;
  readonly month: string;
  readonly merged_at: string;
  readonly workloads: number;
  readonly improved: number;
  readonly expert_speedup: { readonly all: number | null; readonly improved: number | null };
  readonly category: string | null;
  readonly difficulty: string | null;
  readonly classifier: string;
  /** The task folder, and whether it is on disk (emit's finish writes it). */
  readonly folder: string;
  readonly written: boolean;
}

function listing(task: MonthTask, out: string): TaskListing {
  const r = task.row;
  let improved = 0;
  try {
    improved = (JSON.parse(task.files['metadata.json'] ?? '{}') as { workloads?: { improved?: unknown[] } }).workloads?.improved?.length ?? 0;
  } catch {
    improved = 0;
  }
  const folder = resolve(out, r.month, r.instance_id);
  return {
    instance_id: r.instance_id,
    repo: r.repo,
    pull_number: r.pull_number,
    month: r.month,
    merged_at: r.merged_at,
    workloads: r.workloads.count,
    improved,
    expert_speedup: r.expert_speedup,
    category: r.category,
    difficulty: r.difficulty,
    classifier: r.classifier,
    folder,
    written: existsSync(folder),
  };
}

function fmt(x: number | null): string {
  return x === null ? 'n/a' : `${x.toFixed(2)}x`;
}

export function formatTasks(tasks: readonly TaskListing[]): string {
  if (tasks.length === 0) return 'no tasks emitted';
  const header = ['instance_id', 'month', 'workloads', 'speedup (all / improved)', 'category', 'folder'];
  const rows = tasks.map((t) => [t.instance_id, t.month, `${t.improved}/${t.workloads} improved`, `${fmt(t.expert_speedup.all)} / ${fmt(t.expert_speedup.improved)}`, t.category ?? '-', t.written ? t.folder : `${t.folder} (not written yet)`]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The emitted tasks of a month, or of every month with emitted tasks, sorted by month and instance id. */
export function emittedTasks(ledger: Ledger, window: Window | null, out: string): TaskListing[] {
  const log = createLogger({ level: 'silent', format: 'json' });
  const months = window
    ? monthsOf(window)
    : [...new Set(ledger.list('emit', { statuses: ['done'] }).flatMap((r) => (r.at ? [monthOf(r.at)] : [])))].sort();
  return months.flatMap((m) =>
    monthTasks({ ledger, log }, m)
      .map((t) => listing(t, out))
      .sort((a, b) => (a.instance_id < b.instance_id ? -1 : 1)),
  );
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
    const tasks = emittedTasks(new Ledger(db), window, session.config.out);
    if (session.json) printJson({ db: path, exists: true, month: window?.label ?? null, out: session.config.out, tasks });
    else print(formatTasks(tasks));
    return 0;
  } finally {
    db.close();
  }
}
