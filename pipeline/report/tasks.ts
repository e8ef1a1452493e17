import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ledger } from '../../cache/ledger.js';
import type { Db } from '../../cache/store.js';
import { createLogger } from '../logging.js';
import { monthTasks } from '../../stages/emit/index.js';
import type { MonthTask } from '../../stages/emit/month-files.js';
import { emitConfig } from '../../stages/emit/config.js';
import { gateTask, type GateOptions } from '../../tasks/publish/replay-gate.js';
import { knownReplays } from '../../tasks/publish/task-replays.js';
import type { ReplayVerdict } from '../concepts/records/replay-record.js';
import { monthOf, monthsOf, type Window } from '../window.js';
import { memorySource, readTaskFolderContents, TaskFolderError } from '../../tasks/folder/index.js';

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
  /** Its replays (`perfmine replay`, from the store and the folder) and what the publish gate makes of them. */
  readonly replays: TaskReplays;
}

export interface TaskReplays {
  /** Replays of the task's current folder, by verdict. */
  readonly count: number;
  readonly by_verdict: Readonly<Record<ReplayVerdict, number>>;
  /** Replays of another version of its folder (not counted). */
  readonly stale: number;
  readonly machines: readonly string[];
  /** Workloads that replicated in every counted replay that judged them. */
  readonly replicated_workloads: readonly string[];
  /** Per judged workload: in how many replays it replicated, of those that judged it. */
  readonly workloads: readonly { readonly name: string; readonly replicated: number; readonly judged: number }[];
  /** Whether `perfmine publish` would include it (emit.publish), and why not. */
  readonly published: boolean;
  readonly gate_reason: string | null;
  readonly gate_detail: string;
}

function replaysOf(task: MonthTask, db: Db, out: string, gate: GateOptions): TaskReplays {
  const d = gateTask(task, knownReplays(db, out, [task]).get(task.row.instance_id) ?? [], gate);
  const s = d.summary;
  return {
    count: s.count,
    by_verdict: s.byVerdict,
    stale: s.stale,
    machines: s.machines,
    replicated_workloads: s.replicatedWorkloads,
    workloads: s.workloads,
    published: d.published,
    gate_reason: d.reason,
    gate_detail: d.detail,
  };
}

function listing(task: MonthTask, out: string, replays: TaskReplays): TaskListing {
  const r = task.row;
  // the improved workloads as the folder's metadata names them (the one reader); a folder it cannot read: none
  let improved = 0;
  try {
    improved =
      readTaskFolderContents(memorySource(r.instance_id, task.files, Object.keys(task.blobs))).metadata.workloads?.improved.length ?? 0;
  } catch (error) {
    if (!(error instanceof TaskFolderError)) throw error;
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
    replays,
  };
}

/** The publish gate's defaults (emit.publish), for callers without a configuration. */
const DEFAULT_GATE: GateOptions = emitConfig.parse({}).publish;

/** The emitted tasks of a month, or of every month with emitted tasks, sorted by month and instance id; with their replays. */
export function emittedTasks(db: Db, window: Window | null, out: string, gate: GateOptions = DEFAULT_GATE): TaskListing[] {
  const ledger = new Ledger(db);
  const log = createLogger({ level: 'silent', format: 'json' });
  const months = window
    ? monthsOf(window)
    : [...new Set(ledger.list('emit', { statuses: ['done'] }).flatMap((r) => (r.at ? [monthOf(r.at)] : [])))].sort();
  return months.flatMap((m) =>
    monthTasks({ ledger, log, db }, m)
      .map((t) => listing(t, out, replaysOf(t, db, out, gate)))
      .sort((a, b) => (a.instance_id < b.instance_id ? -1 : 1)),
  );
}
