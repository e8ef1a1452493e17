import { replayRecordSchema, replayTaskKey, type ReplayRecord } from '../pipeline/concepts/records/replay-record.js';
import type { Db } from './store.js';
import { nowIso } from './store.js';

/**
 * The replays of emitted tasks (migration 0017): one row per replay id, its whole record as JSON.
 * A replay seen again (the same record read back from a task folder) is not stored twice. A store
 * older than the migration, opened read-only, has no table: it reads as having no replays.
 */

export type ReplayOrigin = 'replayed' | 'imported';

function hasTable(db: Db): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'replays'").get() !== undefined;
}

export class ReplayStore {
  constructor(private readonly db: Db) {}

  /** Stores the record unless its id is already there; true when it was new. */
  save(record: ReplayRecord, origin: ReplayOrigin): boolean {
    const result = this.db
      .prepare(
        `INSERT INTO replays (id, instance_id, task_key, folder_digest, verdict, replayed_at, machine_ms, record, origin, stored_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
      )
      .run(
        record.id,
        record.task.instance_id,
        replayTaskKey(record),
        record.folder.digest,
        record.verdict,
        record.replayed_at,
        Math.round(record.durations.machine_ms),
        JSON.stringify(record),
        origin,
        nowIso(),
      );
    return result.changes > 0;
  }

  /** The replays of one task, or of every task, oldest first (records that no longer parse are left out). */
  list(instanceId?: string): ReplayRecord[] {
    if (!hasTable(this.db)) return [];
    const rows =
      instanceId === undefined
        ? this.db.prepare<[], { record: string }>('SELECT record FROM replays ORDER BY replayed_at, id').all()
        : this.db
            .prepare<[string], { record: string }>('SELECT record FROM replays WHERE instance_id = ? ORDER BY replayed_at, id')
            .all(instanceId);
    const out: ReplayRecord[] = [];
    for (const row of rows) {
      const parsed = replayRecordSchema.safeParse(JSON.parse(row.record));
      if (parsed.success) out.push(parsed.data);
    }
    return out;
  }

  /** Each task's replays' machine time (ms), by `owner/name#N`: what the replays cost (pipeline/concepts/task-costs.ts). */
  machineTimes(): Map<string, number[]> {
    const out = new Map<string, number[]>();
    if (!hasTable(this.db)) return out;
    for (const row of this.db
      .prepare<[], { task_key: string; machine_ms: number }>('SELECT task_key, machine_ms FROM replays ORDER BY replayed_at, id')
      .all()) {
      const list = out.get(row.task_key) ?? [];
      list.push(row.machine_ms);
      out.set(row.task_key, list);
    }
    return out;
  }
}
