import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { ConfigError } from '../pipeline/errors.js';

export type Db = Database.Database;

export interface Migration {
  readonly id: number;
  readonly name: string;
  readonly sql: string;
}

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
const FILE_RE = /^(\d{4})-([a-z0-9-]+)\.sql$/;

let cached: readonly Migration[] | undefined;

/** The numbered migrations shipped with this version, in order (`cache/migrations/NNNN-name.sql`). */
export function migrations(): readonly Migration[] {
  if (cached) return cached;
  const list: Migration[] = [];
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) {
    const m = FILE_RE.exec(file);
    if (!m) continue;
    list.push({ id: Number(m[1]), name: m[2]!, sql: readFileSync(join(MIGRATIONS_DIR, file), 'utf8') });
  }
  const ids = new Set(list.map((x) => x.id));
  if (ids.size !== list.length) throw new Error(`two migrations share a number in ${MIGRATIONS_DIR}`);
  cached = list;
  return list;
}

export function latestSchemaVersion(): number {
  return migrations().at(-1)?.id ?? 0;
}

export interface OpenOptions {
  /** Open without creating or migrating; fails when the file does not exist. */
  readonly readonly?: boolean;
  /** How long a writer waits for another writer's lock, in milliseconds (default 10 s). */
  readonly busyTimeoutMs?: number;
}

/**
 * Opens the SQLite store: WAL journal, a busy timeout, foreign keys, and every migration this
 * version knows applied in order inside one immediate transaction. Refuses a database written by
 * a newer perfmine.
 */
export function openStore(path: string, options: OpenOptions = {}): Db {
  const memory = path === ':memory:';
  if (!memory && !options.readonly) mkdirSync(dirname(path), { recursive: true });
  if (!memory && options.readonly && !existsSync(path)) {
    throw new ConfigError(`db: no database at ${path}`, { reason: 'no-database', fix: 'run a stage first, or pass --db' });
  }
  const db = new Database(path, { readonly: options.readonly ?? false, timeout: options.busyTimeoutMs ?? 10_000 });
  try {
    if (!options.readonly) {
      if (!memory) db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      // Stages write tens of thousands of rows in a run: checkpoint the WAL every ~40 MB rather
      // than every 4 MB (each checkpoint waits for the disk), and cut it back to 64 MB afterwards.
      db.pragma('wal_autocheckpoint = 10000');
      db.pragma('journal_size_limit = 67108864');
    }
    db.pragma('foreign_keys = ON');
    checkNotNewer(db, path);
    if (!options.readonly) migrate(db, path);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function appliedIds(db: Db): number[] {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!exists) return [];
  return (db.prepare('SELECT id FROM schema_migrations ORDER BY id').all() as { id: number }[]).map((r) => r.id);
}

function checkNotNewer(db: Db, path: string): void {
  const applied = appliedIds(db);
  const known = new Set(migrations().map((m) => m.id));
  const unknown = applied.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new ConfigError(
      `db: ${path} was written by a newer perfmine (schema ${Math.max(...applied)}; this version knows up to ${latestSchemaVersion()})`,
      { reason: 'schema-too-new', fix: 'upgrade perfmine, or point --db at another file' },
    );
  }
}

function migrate(db: Db, path: string): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const apply = db.transaction(() => {
    // Re-read inside the write lock: another process may have migrated meanwhile.
    checkNotNewer(db, path);
    const done = new Set(appliedIds(db));
    const insert = db.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)');
    for (const m of migrations()) {
      if (done.has(m.id)) continue;
      db.exec(m.sql);
      insert.run(m.id, m.name, new Date().toISOString());
    }
    db.pragma(`user_version = ${latestSchemaVersion()}`);
  });
  apply.immediate();
}

export interface SchemaStatus {
  readonly applied: readonly number[];
  readonly latest: number;
  readonly pending: readonly number[];
}

export function schemaStatus(db: Db): SchemaStatus {
  const applied = appliedIds(db);
  const done = new Set(applied);
  return { applied, latest: latestSchemaVersion(), pending: migrations().filter((m) => !done.has(m.id)).map((m) => m.id) };
}

/** Current time as ISO text; one place so that tests can see what is written. */
export function nowIso(): string {
  return new Date().toISOString();
}
