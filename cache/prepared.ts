import type { Statement } from 'better-sqlite3';
import type { Db } from './store.js';

const statements = new WeakMap<Db, Map<string, Statement<unknown[], unknown>>>();

/**
 * A prepared statement, prepared once per connection and SQL text. Preparing costs more than
 * running a simple query, so helpers called once per item (tens of thousands a run) use this.
 */
export function prepared<P extends unknown[] = unknown[], R = unknown>(db: Db, sql: string): Statement<P, R> {
  let byText = statements.get(db);
  if (!byText) statements.set(db, (byText = new Map()));
  let statement = byText.get(sql);
  if (!statement) byText.set(sql, (statement = db.prepare(sql) as Statement<unknown[], unknown>));
  return statement as unknown as Statement<P, R>;
}
