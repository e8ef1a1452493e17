import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { ConfigError } from '../pipeline/errors.js';
import { checkCreatable, writableDirectory } from '../pipeline/paths.js';

/** What is at a database path: nothing yet, a 0-byte file (SQLite reads it as an empty database), or a SQLite file. */
export type DatabaseFileState = 'absent' | 'empty' | 'sqlite';

const SQLITE_HEADER = 'SQLite format 3\0';
const OTHER_FILE = 'pass --db the perfmine database (default ./perfmine.db), or a path where a new one can be created';

function fail(issue: string, reason: string, fix: string): ConfigError {
  return new ConfigError(`db: ${issue}`, { reason, fix });
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Checks a database path before SQLite touches it, and throws a ConfigError (exit 2) that names
 * the path, says what is wrong and what to do. `read`: the file may be absent (the caller says
 * what that means). `write`: the file, or the directory it would be created in, must be writable
 * by this user, as must its directory (SQLite's WAL journal writes `<db>-wal` and `<db>-shm`
 * beside it). Changes nothing on disk.
 */
export function checkDatabasePath(path: string, mode: 'read' | 'write'): DatabaseFileState {
  if (path === ':memory:') return 'sqlite';
  let size: number;
  try {
    const st = statSync(path);
    if (st.isDirectory())
      throw fail(
        `${path} is a directory, not a database file`,
        'database-unusable',
        `pass --db a file, e.g. --db ${resolve(path, 'perfmine.db')}`,
      );
    if (!st.isFile()) throw fail(`${path} is not a regular file`, 'database-unusable', OTHER_FILE);
    size = st.size;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = errnoOf(error);
    if (code === 'ENOENT') {
      if (mode === 'write') checkCreatable(path, 'db', '--db');
      return 'absent';
    }
    if (code === 'ENOTDIR') throw fail(`${path}: a part of the path is a file, not a directory`, 'database-unusable', OTHER_FILE);
    if (code === 'EACCES')
      throw fail(
        `cannot reach ${path}: permission denied on a directory of the path`,
        'database-unusable',
        'run as a user who can read that directory, or pass --db another file',
      );
    throw fail(`cannot read ${path}: ${(error as Error).message}`, 'database-unusable', OTHER_FILE);
  }

  if (size > 0) {
    const header = Buffer.alloc(SQLITE_HEADER.length);
    let fd: number | undefined;
    try {
      fd = openSync(path, 'r');
      readSync(fd, header, 0, header.length, 0);
    } catch (error) {
      if (errnoOf(error) === 'EACCES')
        throw fail(
          `cannot read ${path}: permission denied`,
          'database-unusable',
          'run as a user who can read it (see ls -l), or pass --db another file',
        );
      throw fail(`cannot read ${path}: ${(error as Error).message}`, 'database-unusable', OTHER_FILE);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    if (header.toString('latin1') !== SQLITE_HEADER) {
      throw fail(
        `${path} is not a SQLite database (its first bytes are not SQLite's header); perfmine leaves it as it is`,
        'not-a-database',
        OTHER_FILE,
      );
    }
  }

  if (mode === 'write') {
    try {
      accessSync(path, constants.R_OK | constants.W_OK);
    } catch {
      throw fail(
        `${path} is read-only for this user`,
        'database-read-only',
        'make it writable (chmod u+w), run as its owner, or pass --db another file',
      );
    }
    const dir = dirname(resolve(path));
    if (!writableDirectory(dir)) {
      throw fail(
        `the directory ${dir} is not writable by this user: SQLite writes ${basename(path)}-wal and ${basename(path)}-shm beside the database`,
        'database-read-only',
        'run as a user who can write that directory, or move the database to one and pass --db',
      );
    }
  }
  return size === 0 ? 'empty' : 'sqlite';
}

/**
 * A SQLite error met while opening a database, as the ConfigError the operator can act on, or
 * null when it is none of those (then it is a bug and stays one).
 */
export function databaseErrorOf(path: string, error: unknown): ConfigError | null {
  if (!isSqliteError(error)) return null;
  const code = error.code;
  const detail = error.message;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return fail(
      `${path} stayed locked by another process (${detail})`,
      'database-busy',
      'wait for the other perfmine to finish (perfmine status lists the runs), or pass --db another file',
    );
  }
  if (code.startsWith('SQLITE_READONLY')) {
    return fail(
      `${path} cannot be written (${detail})`,
      'database-read-only',
      'make the file and its directory writable for this user, or pass --db another file',
    );
  }
  if (code.startsWith('SQLITE_CANTOPEN') || code === 'SQLITE_PERM' || code === 'SQLITE_AUTH') {
    return fail(
      `cannot open ${path} (${detail})`,
      'database-unusable',
      'check that the file and its directory exist and are readable (and writable for a run), or pass --db another file',
    );
  }
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return fail(
      `${path} is not a usable SQLite database (${detail})`,
      'not-a-database',
      'restore it from a backup, or pass --db another file',
    );
  }
  if (code === 'SQLITE_FULL') {
    return fail(
      `the disk holding ${path} is full (${detail})`,
      'disk-full',
      'free space on that disk, then run the same command again (finished items are kept)',
    );
  }
  if (code.startsWith('SQLITE_IOERR')) {
    return fail(
      `input/output error on ${path} (${detail})`,
      'database-io-error',
      'check the disk and its file system (network file systems may not support the locks SQLite needs), or pass --db a local file',
    );
  }
  return null;
}

/**
 * better-sqlite3's SqliteError, known by its name and code rather than its class so that reporting
 * an error (which every command can do, `--help` too) never loads the native driver.
 */
function isSqliteError(error: unknown): error is Error & { readonly code: string } {
  return error instanceof Error && error.name === 'SqliteError' && typeof (error as { code?: unknown }).code === 'string';
}
