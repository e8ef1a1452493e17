import type { Db } from './store.js';
import { nowIso } from './store.js';
import type { Window } from '../pipeline/window.js';
import { normalizeInstant } from '../pipeline/window.js';

export type ItemStatus = 'pending' | 'done' | 'dropped' | 'failed';
export const ITEM_STATUSES: readonly ItemStatus[] = ['done', 'dropped', 'failed', 'pending'];

export interface LedgerRow {
  readonly stage: string;
  readonly key: string;
  readonly repo: string | null;
  readonly at: string | null;
  readonly status: ItemStatus;
  readonly reason: string | null;
  readonly detail: string | null;
  readonly errorKind: string | null;
  readonly lastError: string | null;
  readonly attempts: number;
  readonly inputHash: string;
  readonly stageVersion: number;
  /** Parsed JSON output of a done (or dropped) item; undefined when there is none. */
  readonly output: unknown;
  readonly runId: number | null;
  readonly updatedAt: string;
}

interface RawRow {
  stage: string;
  key: string;
  repo: string | null;
  at: string | null;
  status: ItemStatus;
  reason: string | null;
  detail: string | null;
  error_kind: string | null;
  last_error: string | null;
  attempts: number;
  input_hash: string;
  stage_version: number;
  output: string | null;
  run_id: number | null;
  updated_at: string;
}

function fromRaw(r: RawRow): LedgerRow {
  return {
    stage: r.stage,
    key: r.key,
    repo: r.repo,
    at: r.at,
    status: r.status,
    reason: r.reason,
    detail: r.detail,
    errorKind: r.error_kind,
    lastError: r.last_error,
    attempts: r.attempts,
    inputHash: r.input_hash,
    stageVersion: r.stage_version,
    output: r.output === null ? undefined : JSON.parse(r.output),
    runId: r.run_id,
    updatedAt: r.updated_at,
  };
}

export interface PlannedItem {
  readonly key: string;
  readonly repo: string | null;
  readonly at: string | null;
  readonly inputHash: string;
}

export interface Completion {
  readonly status: 'done' | 'dropped';
  readonly reason: string | null;
  readonly detail: string | null;
  readonly output: unknown;
}

/** One decision of `completeMany`: the item, its decision, and the status its row had before. */
export interface ManyCompletion {
  readonly item: PlannedItem;
  readonly completion: Completion;
  /** The row's status before (from `decisions`), or undefined when unknown. */
  readonly previous: ItemStatus | undefined;
}

export interface Failure {
  readonly kind: string;
  readonly reason: string;
  readonly message: string;
}

export interface LedgerFilter {
  readonly window?: Window | null;
  /** With a window: also return items that belong to no instant (repositories). Default true. */
  readonly includeTimeless?: boolean;
  readonly repos?: readonly string[];
  readonly statuses?: readonly ItemStatus[];
  readonly keys?: readonly string[];
}

export interface StatusCount {
  readonly stage: string;
  readonly status: ItemStatus;
  readonly reason: string | null;
  readonly count: number;
}

/** The stage ledger: one row per (stage, item key) with the latest decision about it. */
export class Ledger {
  readonly #db: Db;
  readonly #get;
  readonly #plan;
  readonly #complete;
  readonly #fail;
  readonly #updateSameStatus;
  readonly #updateStatus;

  constructor(db: Db) {
    this.#db = db;
    this.#get = db.prepare<[string, string], RawRow>('SELECT * FROM stage_items WHERE stage = ? AND key = ?');
    // A planned item is inserted as pending; a known item whose input or stage version changed
    // goes back to pending (its old output stays until it is replaced); an unchanged one is kept.
    this.#plan = db.prepare(`
      INSERT INTO stage_items (stage, key, repo, at, status, input_hash, stage_version, run_id, updated_at)
      VALUES (@stage, @key, @repo, @at, 'pending', @inputHash, @version, @runId, @now)
      ON CONFLICT (stage, key) DO UPDATE SET
        repo = excluded.repo, at = excluded.at,
        status = CASE WHEN stage_items.input_hash = excluded.input_hash AND stage_items.stage_version = excluded.stage_version
                      THEN stage_items.status ELSE 'pending' END,
        reason = CASE WHEN stage_items.input_hash = excluded.input_hash AND stage_items.stage_version = excluded.stage_version
                      THEN stage_items.reason ELSE NULL END,
        updated_at = CASE WHEN stage_items.input_hash = excluded.input_hash AND stage_items.stage_version = excluded.stage_version
                      THEN stage_items.updated_at ELSE excluded.updated_at END
      WHERE stage_items.repo IS NOT excluded.repo OR stage_items.at IS NOT excluded.at
         OR stage_items.input_hash <> excluded.input_hash OR stage_items.stage_version <> excluded.stage_version`);
    // complete and fail follow plan, which has just written repo and at: their updates leave those
    // two indexed columns out of the SET list (naming a column there rewrites its index entries
    // even when the value is the same, which more than doubled the cost of a ledger write).
    this.#complete = db.prepare(`
      INSERT INTO stage_items (stage, key, repo, at, status, reason, detail, error_kind, last_error, attempts,
                               input_hash, stage_version, output, run_id, updated_at)
      VALUES (@stage, @key, @repo, @at, @status, @reason, @detail, NULL, NULL, 1, @inputHash, @version, @output, @runId, @now)
      ON CONFLICT (stage, key) DO UPDATE SET
        status = excluded.status, reason = excluded.reason,
        detail = excluded.detail, error_kind = NULL, last_error = NULL, attempts = stage_items.attempts + 1,
        input_hash = excluded.input_hash, stage_version = excluded.stage_version, output = excluded.output,
        run_id = excluded.run_id, updated_at = excluded.updated_at`);
    // completeMany: the row exists (planned), so an UPDATE by key; one that leaves `status` out of
    // its SET list when it does not change keeps the status index untouched (naming an indexed
    // column rewrites its index entries even when the value is the same).
    this.#updateSameStatus = db.prepare<
      [string | null, string | null, string, number, string | null, number | null, string, string, string]
    >(`
      UPDATE stage_items SET reason = ?, detail = ?, error_kind = NULL, last_error = NULL, attempts = attempts + 1,
        input_hash = ?, stage_version = ?, output = ?, run_id = ?, updated_at = ?
      WHERE stage = ? AND key = ?`);
    this.#updateStatus = db.prepare<
      [string, string | null, string | null, string, number, string | null, number | null, string, string, string]
    >(`
      UPDATE stage_items SET status = ?, reason = ?, detail = ?, error_kind = NULL, last_error = NULL, attempts = attempts + 1,
        input_hash = ?, stage_version = ?, output = ?, run_id = ?, updated_at = ?
      WHERE stage = ? AND key = ?`);
    this.#fail = db.prepare(`
      INSERT INTO stage_items (stage, key, repo, at, status, reason, detail, error_kind, last_error, attempts,
                               input_hash, stage_version, run_id, updated_at)
      VALUES (@stage, @key, @repo, @at, 'failed', @reason, NULL, @kind, @message, 1, @inputHash, @version, @runId, @now)
      ON CONFLICT (stage, key) DO UPDATE SET
        status = 'failed', reason = excluded.reason, detail = NULL,
        error_kind = excluded.error_kind, last_error = excluded.last_error, attempts = stage_items.attempts + 1,
        input_hash = excluded.input_hash, stage_version = excluded.stage_version, run_id = excluded.run_id,
        updated_at = excluded.updated_at`);
  }

  /** The decision part of every row of a stage, by key (no output parsed): what the runner needs to plan. */
  decisions(stage: string): Map<string, Pick<LedgerRow, 'repo' | 'at' | 'status' | 'reason' | 'inputHash' | 'stageVersion'>> {
    const rows = this.#db
      .prepare<[string], [string, string | null, string | null, ItemStatus, string | null, string, number]>(
        'SELECT key, repo, at, status, reason, input_hash, stage_version FROM stage_items WHERE stage = ?',
      )
      .raw()
      .all(stage);
    const out = new Map<string, Pick<LedgerRow, 'repo' | 'at' | 'status' | 'reason' | 'inputHash' | 'stageVersion'>>();
    for (const [key, repo, at, status, reason, inputHash, stageVersion] of rows)
      out.set(key, { repo, at, status, reason, inputHash, stageVersion });
    return out;
  }

  /** The status of each of these items that has a row, by key: one statement however many. */
  statuses(stage: string, keys: readonly string[]): Map<string, ItemStatus> {
    const rows = this.#db
      .prepare<[string, string], [string, ItemStatus]>(
        'SELECT key, status FROM stage_items WHERE stage = ? AND key IN (SELECT value FROM json_each(?))',
      )
      .raw()
      .all(stage, JSON.stringify(keys));
    return new Map(rows);
  }

  /** Whether `plan` would change the row: a new item, or a changed input, version, repository or instant. */
  static planChanges(
    known: Pick<LedgerRow, 'repo' | 'at' | 'inputHash' | 'stageVersion'> | undefined,
    item: PlannedItem,
    version: number,
  ): boolean {
    return (
      known === undefined ||
      known.inputHash !== item.inputHash ||
      known.stageVersion !== version ||
      known.repo !== item.repo ||
      known.at !== (item.at && normalizeInstant(item.at))
    );
  }

  get(stage: string, key: string): LedgerRow | undefined {
    const row = this.#get.get(stage, key);
    return row ? fromRaw(row) : undefined;
  }

  /** Records planned items (in one transaction). */
  plan(stage: string, version: number, items: readonly PlannedItem[], runId: number | null): void {
    const now = nowIso();
    const tx = this.#db.transaction(() => {
      for (const item of items) {
        this.#plan.run(itemParams(stage, version, item, runId, now));
      }
    });
    tx();
  }

  /** Records a decision. Call inside the transaction that writes the stage's own rows. */
  complete(stage: string, version: number, item: PlannedItem, completion: Completion, runId: number | null): void {
    this.#complete.run({
      ...itemParams(stage, version, item, runId),
      status: completion.status,
      reason: completion.reason,
      detail: completion.detail,
      output: completion.output === undefined ? null : JSON.stringify(completion.output),
    });
  }

  /**
   * Records many decisions, as `complete` does each: call inside the transaction that writes the
   * stage's own rows. For planned items (their rows exist), it updates each row by key; a row that
   * is not there is inserted by `complete`.
   */
  completeMany(stage: string, version: number, decisions: readonly ManyCompletion[], runId: number | null): void {
    const now = nowIso();
    for (const { item, completion, previous } of decisions) {
      const output = completion.output === undefined ? null : JSON.stringify(completion.output);
      const changes =
        previous === completion.status
          ? this.#updateSameStatus.run(completion.reason, completion.detail, item.inputHash, version, output, runId, now, stage, item.key)
              .changes
          : this.#updateStatus.run(
              completion.status,
              completion.reason,
              completion.detail,
              item.inputHash,
              version,
              output,
              runId,
              now,
              stage,
              item.key,
            ).changes;
      if (changes === 0) this.complete(stage, version, item, completion, runId);
    }
  }

  fail(stage: string, version: number, item: PlannedItem, failure: Failure, runId: number | null): void {
    this.#fail.run({
      ...itemParams(stage, version, item, runId),
      reason: failure.reason,
      kind: failure.kind,
      message: failure.message.slice(0, 4000),
    });
  }

  list(stage: string, filter: LedgerFilter = {}): LedgerRow[] {
    const { sql, params } = where(filter);
    const rows = this.#db.prepare<unknown[], RawRow>(`SELECT * FROM stage_items WHERE stage = ?${sql} ORDER BY key`).all(stage, ...params);
    return rows.map(fromRaw);
  }

  /** Just the key and the parsed output of the rows `list` would return (in key order): what a next stage plans from. */
  outputs(stage: string, filter: LedgerFilter = {}): { key: string; output: unknown }[] {
    const { sql, params } = where(filter);
    const rows = this.#db
      .prepare<unknown[], [string, string | null]>(`SELECT key, output FROM stage_items WHERE stage = ?${sql} ORDER BY key`)
      .raw()
      .all(stage, ...params);
    return rows.map(([key, output]) => ({ key, output: output === null ? undefined : JSON.parse(output) }));
  }

  /**
   * Key, repository, instant and some top-level fields of the outputs of the rows `list` would
   * return (in key order), read by SQLite from the stored JSON: what a next stage plans from,
   * without parsing every output whole. A field that is absent is undefined.
   */
  outputFields(
    stage: string,
    filter: LedgerFilter,
    fields: readonly string[],
  ): { key: string; repo: string | null; at: string | null; fields: unknown[] }[] {
    for (const f of fields) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(f)) throw new RangeError(`outputFields: not a plain field name: ${f}`);
    const { sql, params } = where(filter);
    const columns = fields.map((f) => `, output ->> '$.${f}'`).join('');
    const rows = this.#db
      .prepare<unknown[], unknown[]>(`SELECT key, repo, at${columns} FROM stage_items WHERE stage = ?${sql} ORDER BY key`)
      .raw()
      .all(stage, ...params);
    return rows.map((r) => ({
      key: r[0] as string,
      repo: r[1] as string | null,
      at: r[2] as string | null,
      fields: r.slice(3).map((v) => (v === null ? undefined : v)),
    }));
  }

  /** Counts per stage, status and reason. */
  counts(filter: LedgerFilter = {}): StatusCount[] {
    const { sql, params } = where(filter);
    return this.#db
      .prepare<unknown[], StatusCount>(
        `SELECT stage, status, reason, COUNT(*) AS count FROM stage_items WHERE 1 = 1${sql}
         GROUP BY stage, status, reason ORDER BY stage, status, reason`,
      )
      .all(...params);
  }
}

function where(filter: LedgerFilter): { sql: string; params: unknown[] } {
  let sql = '';
  const params: unknown[] = [];
  if (filter.window) {
    sql += filter.includeTimeless === false ? ' AND at >= ? AND at < ?' : ' AND (at IS NULL OR (at >= ? AND at < ?))';
    params.push(filter.window.start, filter.window.end);
  }
  if (filter.repos && filter.repos.length > 0) {
    sql += ` AND repo IN (${filter.repos.map(() => '?').join(', ')})`;
    params.push(...filter.repos);
  }
  if (filter.statuses && filter.statuses.length > 0) {
    sql += ` AND status IN (${filter.statuses.map(() => '?').join(', ')})`;
    params.push(...filter.statuses);
  }
  if (filter.keys && filter.keys.length > 0) {
    sql += ` AND key IN (${filter.keys.map(() => '?').join(', ')})`;
    params.push(...filter.keys);
  }
  return { sql, params };
}

/** The named parameters every write of an item's row takes: who it is, what input, which run, when. */
function itemParams(stage: string, version: number, item: PlannedItem, runId: number | null, now: string = nowIso()) {
  return {
    stage,
    key: item.key,
    repo: item.repo,
    at: item.at && normalizeInstant(item.at),
    inputHash: item.inputHash,
    version,
    runId,
    now,
  };
}
