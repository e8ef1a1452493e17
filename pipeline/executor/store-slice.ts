import type { Db } from '../../cache/store.js';
import { InternalError } from '../errors.js';

/**
 * A store slice: the rows of the store that one item reads, carried to a compute node in its job
 * input, and the rows the item wrote there, carried back in its result. On the node the stage
 * runs against an in-memory store seeded with the slice, so the coordinator stays the only
 * writer of the real store (its SQLite file never travels, and never sits on a shared filesystem).
 */

/** Rows by table name. Values are SQLite's: text, numbers, null. */
export type Slice = Readonly<Record<string, readonly Readonly<Record<string, unknown>>[]>>;

/** The rows of `table` that match `where` (SQL, with `?` placeholders bound to `params`). */
export interface SliceRead {
  readonly table: string;
  readonly where: string;
  readonly params: readonly (string | number)[];
}

/**
 * A table whose rows the item may write. `id`: its integer key is assigned by the store
 * (AUTOINCREMENT): rows written on the node are inserted anew on the coordinator, and the new
 * ids are handed back to the stage (which may have put the node's ids in its output).
 */
export interface SliceWrite {
  readonly table: string;
  readonly id?: string;
}

/** Table and column names come from code, never from a job's file: checked all the same. */
function name(word: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(word)) throw new InternalError('bad-slice-name', `not a table or column name: ${JSON.stringify(word)}`);
  return word;
}

export function readSlice(db: Db, reads: readonly SliceRead[]): Slice {
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const r of reads) {
    const rows = db.prepare(`SELECT * FROM ${name(r.table)} WHERE ${r.where}`).all(...r.params) as Record<string, unknown>[];
    (out[r.table] ??= []).push(...rows);
  }
  return out;
}

function insertRows(db: Db, table: string, rows: readonly Readonly<Record<string, unknown>>[], skip?: string): number[] {
  const ids: number[] = [];
  for (const row of rows) {
    const columns = Object.keys(row)
      .filter((c) => c !== skip)
      .map(name);
    const info = db
      .prepare(`INSERT OR REPLACE INTO ${name(table)} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`)
      .run(...columns.map((c) => row[c]));
    ids.push(Number(info.lastInsertRowid));
  }
  return ids;
}

/** Fills a fresh store (the node's, in memory) with a slice, rows as they are (ids included). */
export function seedStore(db: Db, slice: Slice): void {
  db.transaction(() => {
    for (const [table, rows] of Object.entries(slice)) insertRows(db, table, rows);
  })();
}

/**
 * The rows of the written tables that the seed did not hold as they are now: what the item wrote.
 * An `id` table is append-only: a seeded row that changed there is a bug of the stage.
 */
export function sliceWrites(db: Db, seed: Slice, writes: readonly SliceWrite[]): Slice {
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const w of writes) {
    const seeded = seed[w.table] ?? [];
    const before = new Set(seeded.map((r) => JSON.stringify(r)));
    const seededIds = new Set(w.id === undefined ? [] : seeded.map((r) => r[w.id!]));
    const rows = db.prepare(`SELECT * FROM ${name(w.table)}`).all() as Record<string, unknown>[];
    const written = rows.filter((r) => !before.has(JSON.stringify(r)));
    const changed = written.find((r) => seededIds.has(r[w.id!]));
    if (changed)
      throw new InternalError(
        'slice-row-changed',
        `table ${w.table} is append-only for remote items, but row ${String(changed[w.id!])} changed`,
      );
    if (written.length > 0) out[w.table] = written;
  }
  return out;
}

/** The coordinator's ids of rows written on a node, by table, then by the node's id. */
export type IdMap = ReadonlyMap<string, ReadonlyMap<number, number>>;

/**
 * Writes what an item wrote on its node into the real store (inside the ingest transaction):
 * keyed rows replace the stored ones, rows of an `id` table get new ids. Tables the stage did not
 * declare are refused (a result file is input, not trusted to say where it writes).
 */
export function applyWrites(db: Db, writes: readonly SliceWrite[], written: Slice): IdMap {
  const declared = new Map(writes.map((w) => [w.table, w]));
  const ids = new Map<string, Map<number, number>>();
  for (const [table, rows] of Object.entries(written)) {
    const w = declared.get(table);
    if (!w) throw new InternalError('undeclared-slice-table', `a node wrote rows of table ${table}, which this stage does not write`);
    if (w.id === undefined) {
      insertRows(db, table, rows);
      continue;
    }
    const newIds = insertRows(db, table, rows, w.id);
    const map = new Map<number, number>();
    rows.forEach((r, i) => map.set(Number(r[w.id!]), newIds[i]!));
    ids.set(table, map);
  }
  return ids;
}
