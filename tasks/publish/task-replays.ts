import { join } from 'node:path';
import { ReplayStore } from '../../cache/replays.js';
import type { Db } from '../../cache/store.js';
import type { ReplayRecord } from '../../pipeline/concepts/records/replay-record.js';
import { mergeReplays, readFolderReplays } from '../../pipeline/concepts/replay-files.js';
import type { MonthTask } from '../../stages/emit/month-files.js';
import type { MonthGate } from './replay-card.js';
import { gateTask, type GateOptions } from './replay-gate.js';

/**
 * Every replay known of each task: the store's (`perfmine replay` records there, and adds what it
 * finds in the folders it replays) and those in the emitted task folders under `out`
 * (`out/YYYY-MM/<instance_id>/replays/*.json`, e.g. copied back from another machine), the same
 * id counted once.
 */
export function knownReplays(
  db: Db,
  out: string,
  tasks: readonly { readonly row: { readonly instance_id: string; readonly month: string } }[],
): Map<string, ReplayRecord[]> {
  const store = new ReplayStore(db);
  const result = new Map<string, ReplayRecord[]>();
  for (const t of tasks) {
    const id = t.row.instance_id;
    result.set(
      id,
      mergeReplays(
        store.list(id),
        readFolderReplays(join(out, t.row.month, id)).records.filter((r) => r.task.instance_id === id),
      ),
    );
  }
  return result;
}

/**
 * A month as published behind the gate (replay-gate.ts): its tasks that pass, and the decision on
 * each of its emitted tasks.
 */
export function gatedMonth<M extends { readonly tasks: readonly MonthTask[] }>(
  db: Db,
  out: string,
  month: M,
  options: GateOptions,
): M & { readonly gate: MonthGate } {
  const replays = knownReplays(db, out, month.tasks);
  const decisions = month.tasks.map((t) => gateTask(t, replays.get(t.row.instance_id) ?? [], options));
  const published = new Set(decisions.filter((d) => d.published).map((d) => d.instanceId));
  return { ...month, tasks: month.tasks.filter((t) => published.has(t.row.instance_id)), gate: { options, decisions } };
}

/** A left-out task in one line of the command's output. */
export function leftOutLine(d: {
  readonly instanceId: string;
  readonly month: string;
  readonly reason: string | null;
  readonly detail: string;
}): string {
  return `${d.instanceId} (${d.month}) left out: ${d.reason}: ${d.detail}`;
}
