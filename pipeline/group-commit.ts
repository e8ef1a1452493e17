import type { Db } from '../cache/store.js';

/**
 * Commits the results of items that finish close together in one SQLite transaction: the first
 * result schedules a flush for the next turn of the event loop (or at once when `maxBatch` are
 * waiting). A result is durable only once flushed; a crash before that loses it, and the item runs
 * again next time, as any item in flight would. When a batch's transaction fails, each result is
 * retried in a transaction of its own, so one bad result never takes the others down.
 */
export class GroupCommit<T> {
  readonly #db: Db;
  readonly #write: (entry: T) => void;
  readonly #written: (entry: T, error: unknown) => void;
  readonly #maxBatch: number;
  #buffer: T[] = [];
  #scheduled: NodeJS.Immediate | null = null;

  /**
   * @param write    the synchronous writes of one result (called inside the transaction)
   * @param written  called once per result after its transaction, with the error if it failed
   */
  constructor(db: Db, write: (entry: T) => void, written: (entry: T, error: unknown) => void, maxBatch = 64) {
    this.#db = db;
    this.#write = write;
    this.#written = written;
    this.#maxBatch = maxBatch;
  }

  add(entry: T): void {
    this.#buffer.push(entry);
    if (this.#buffer.length >= this.#maxBatch) this.flush();
    else this.#scheduled ??= setImmediate(() => this.flush());
  }

  /** Writes everything waiting, now. */
  flush(): void {
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = null;
    const batch = this.#buffer;
    this.#buffer = [];
    if (batch.length === 0) return;
    try {
      this.#db
        .transaction(() => {
          for (const entry of batch) this.#write(entry);
        })
        .immediate();
    } catch {
      for (const entry of batch) {
        let error: unknown;
        try {
          this.#db.transaction(() => this.#write(entry)).immediate();
        } catch (e) {
          error = e ?? new Error('commit failed');
        }
        this.#written(entry, error);
      }
      return;
    }
    for (const entry of batch) this.#written(entry, undefined);
  }
}
