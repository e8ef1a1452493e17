import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../pipeline/errors.js';
import { packagePath } from '../pipeline/package-root.js';
import { checkDatabasePath, databaseErrorOf } from './database-path.js';

export type Db = Database.Database;

export interface Migration {
  readonly id: number;
  readonly name: string;
  readonly sql: string;
}

const MIGRATIONS_DIR = packagePath('cache', 'migrations');
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
  /**
   * Open for reading only, creating nothing: fails with a ConfigError when the file does not
   * exist. A database that needs migrations (an older schema, a 0-byte file) or that SQLite cannot
   * open in place (its directory is not writable) is read from a copy in memory.
   */
  readonly readonly?: boolean;
  /** How long a writer waits for another writer's lock, in milliseconds (default 10 s). */
  readonly busyTimeoutMs?: number;
}

/**
 * Opens the SQLite store: WAL journal, a busy timeout, foreign keys, and every migration this
 * version knows applied in order inside one immediate transaction. The path is checked first
 * (a directory, another program's file, a read-only file: a ConfigError that says what to do),
 * and refuses a database written by a newer perfmine or by another program.
 */
export function openStore(path: string, options: OpenOptions = {}): Db {
  if (options.readonly) return openReader(path, options);
  const memory = path === ':memory:';
  const state = checkDatabasePath(path, 'write');
  if (!memory && state === 'absent') {
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (error) {
      throw new ConfigError(`db: cannot create the directory of ${path}: ${(error as Error).message}`, {
        reason: 'database-unusable',
        fix: 'pass --db a path in a directory you can write',
      });
    }
  }
  return opening(path, () => {
    const db = new Database(path, { timeout: options.busyTimeoutMs ?? 10_000 });
    try {
      // Before anything that writes (switching to WAL rewrites the header): another program's
      // database, or a newer perfmine's, is left byte for byte as it was.
      checkOwnSchema(db, path);
      if (!memory) db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      // Stages write tens of thousands of rows in a run: checkpoint the WAL every ~40 MB rather
      // than every 4 MB (each checkpoint waits for the disk), and cut it back to 64 MB afterwards.
      db.pragma('wal_autocheckpoint = 10000');
      db.pragma('journal_size_limit = 67108864');
      db.pragma('foreign_keys = ON');
      migrate(db, path);
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  });
}

/** Runs an open step and turns the SQLite errors an operator can fix into ConfigErrors naming the path. */
function opening<T>(path: string, open: () => T): T {
  try {
    return open();
  } catch (error) {
    throw databaseErrorOf(path, error) ?? error;
  }
}

function openReader(path: string, options: OpenOptions): Db {
  if (path === ':memory:') return openStore(path, { ...options, readonly: false });
  const state = checkDatabasePath(path, 'read');
  if (state === 'absent') {
    throw new ConfigError(`db: no database at ${path}`, { reason: 'no-database', fix: 'run a stage first, or pass --db' });
  }
  if (state === 'empty') return migratedInMemory(new Database(':memory:'), path);
  return opening(path, () => {
    let db: Db;
    try {
      db = new Database(path, { readonly: true, fileMustExist: true, timeout: options.busyTimeoutMs ?? 10_000 });
      appliedIds(db);
    } catch (error) {
      // SQLite reads a WAL database through `<db>-shm`, which it must be able to create beside it.
      if (!cannotReadInPlace(error)) throw error;
      return migratedInMemory(copyOfFile(path), path);
    }
    try {
      db.pragma('foreign_keys = ON');
      checkOwnSchema(db, path);
      if (schemaStatus(db).pending.length === 0) return db;
      // An older schema: the reader sees it migrated, in memory; the file is migrated by the next run.
      const copy = memoryDatabase(db.serialize());
      db.close();
      return migratedInMemory(copy, path);
    } catch (error) {
      db.close();
      throw error;
    }
  });
}

function cannotReadInPlace(error: unknown): boolean {
  return error instanceof Database.SqliteError && (error.code.startsWith('SQLITE_READONLY') || error.code.startsWith('SQLITE_CANTOPEN'));
}

/**
 * A database image as an in-memory database. The header's journal bytes (18 and 19) are set to
 * rollback: an image of a WAL database would otherwise not open in memory.
 */
function memoryDatabase(image: Buffer): Db {
  if (image.length >= 20) {
    image[18] = 1;
    image[19] = 1;
  }
  return new Database(image);
}

/**
 * The file's bytes as an in-memory database, for a reader that cannot open it in place. Refused
 * while a WAL file holds changes not yet in the database file (a run may be writing them).
 */
function copyOfFile(path: string): Db {
  const wal = `${path}-wal`;
  if (existsSync(wal) && statSync(wal).size > 0) {
    throw new ConfigError(
      `db: cannot read ${path}: its directory is not writable by this user, and the changes in ${wal} can only be read through ${path}-shm, which SQLite must create there`,
      {
        reason: 'database-unusable',
        fix: 'run as a user who can write that directory, or copy the database with its -wal file elsewhere and pass --db the copy',
      },
    );
  }
  return memoryDatabase(readFileSync(path));
}

/** The schema of the file behind a reader that migrated a copy in memory (schemaStatus reports the file's). */
const fileSchemas = new WeakMap<Db, SchemaStatus>();

function migratedInMemory(db: Db, path: string): Db {
  try {
    db.pragma('foreign_keys = ON');
    checkOwnSchema(db, path);
    const onDisk = schemaStatus(db);
    migrate(db, path);
    fileSchemas.set(db, onDisk);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * The store as it is now, in memory: reads see the file's data (migrated to this version's
 * schema), writes go nowhere. Creates, changes and removes nothing on disk: what `--dry-run`
 * plans over. An absent or 0-byte file gives an empty store.
 */
export function openStoreSnapshot(path: string): Db {
  const state = checkDatabasePath(path, 'read');
  if (state !== 'sqlite') return migratedInMemory(new Database(':memory:'), path);
  return opening(path, () => migratedInMemory(memoryDatabase(snapshotImage(path)), path));
}

/**
 * The database's bytes, consistent, without leaving a file behind. With no WAL changes pending,
 * the file alone is the database (read twice around a check that no writer changed it); otherwise
 * SQLite reads it with its WAL (whose -wal and -shm files exist already).
 */
function snapshotImage(path: string): Buffer {
  const wal = `${path}-wal`;
  const walSize = () => (existsSync(wal) ? statSync(wal).size : 0);
  if (walSize() === 0) {
    const before = statSync(path);
    const image = readFileSync(path);
    const after = statSync(path);
    if (walSize() === 0 && before.mtimeMs === after.mtimeMs && before.size === after.size && image.length === after.size) return image;
  }
  const db = new Database(path, { readonly: true, fileMustExist: true, timeout: 10_000 });
  try {
    return db.serialize();
  } finally {
    db.close();
  }
}

function appliedIds(db: Db): number[] {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!exists) return [];
  return (db.prepare('SELECT id FROM schema_migrations ORDER BY id').all() as { id: number }[]).map((r) => r.id);
}

/**
 * Refuses a database that is not perfmine's (tables of another program, no schema_migrations)
 * and one written by a newer perfmine (a migration this version does not know, or a higher
 * user_version): perfmine adds no table to the first and never downgrades the second.
 */
function checkOwnSchema(db: Db, path: string): void {
  const tables = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]
  ).map((r) => r.name);
  if (tables.length > 0 && !tables.includes('schema_migrations')) {
    const shown = tables.slice(0, 5).join(', ') + (tables.length > 5 ? `, ... (${tables.length} tables)` : '');
    throw new ConfigError(
      `db: ${path} is a SQLite database of another program (tables ${shown}), not perfmine's; perfmine leaves it as it is`,
      {
        reason: 'not-a-perfmine-database',
        fix: 'pass --db the perfmine database (default ./perfmine.db), or a new file',
      },
    );
  }
  checkNotNewer(db, path);
}

function checkNotNewer(db: Db, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > latestSchemaVersion()) {
    throw new ConfigError(
      `db: ${path} was written by a newer perfmine (schema ${version}; this version knows up to ${latestSchemaVersion()})`,
      {
        reason: 'schema-too-new',
        fix: 'upgrade perfmine, or point --db at another file',
      },
    );
  }
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

/** The schema of the database file (for a reader that migrated a copy in memory, the file's, not the copy's). */
export function schemaStatus(db: Db): SchemaStatus {
  const onDisk = fileSchemas.get(db);
  if (onDisk) return onDisk;
  const applied = appliedIds(db);
  const done = new Set(applied);
  return {
    applied,
    latest: latestSchemaVersion(),
    pending: migrations()
      .filter((m) => !done.has(m.id))
      .map((m) => m.id),
  };
}

/** Current time as ISO text; one place so that tests can see what is written. */
export function nowIso(): string {
  return new Date().toISOString();
}
