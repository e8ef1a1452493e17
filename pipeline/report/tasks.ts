import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ledger } from '../../cache/ledger.js';
import type { Db } from '../../cache/store.js';
import { createLogger } from '../logging.js';
import { monthTasks } from '../../stages/emit/index.js';
import type { MonthTask } from '../../stages/emit/month-files.js';
import { monthOf, monthsOf, type Window } from '../window.js';

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
    improved =
      (JSON.parse(task.files['metadata.json'] ?? '{}') as { workloads?: { improved?: unknown[] } }).workloads?.improved?.length ?? 0;
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

/** The emitted tasks of a month, or of every month with emitted tasks, sorted by month and instance id. */
export function emittedTasks(db: Db, window: Window | null, out: string): TaskListing[] {
  const ledger = new Ledger(db);
  const log = createLogger({ level: 'silent', format: 'json' });
  const months = window
    ? monthsOf(window)
    : [...new Set(ledger.list('emit', { statuses: ['done'] }).flatMap((r) => (r.at ? [monthOf(r.at)] : [])))].sort();
  return months.flatMap((m) =>
    monthTasks({ ledger, log, db }, m)
      .map((t) => listing(t, out))
      .sort((a, b) => (a.instance_id < b.instance_id ? -1 : 1)),
  );
}
