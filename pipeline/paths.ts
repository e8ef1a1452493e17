import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from './errors.js';

/**
 * Checks of the paths a user gives (output files and directories, input directories), made
 * before any work starts. Each throws a ConfigError (exit 2) whose line starts with the flag or
 * key that named the path, says what is wrong with it and what to do. They change nothing on disk.
 */

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Whether this user may create and remove entries in the directory. */
export function writableDirectory(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

type Found = { readonly kind: 'absent' } | { readonly kind: 'file' } | { readonly kind: 'directory' } | { readonly kind: 'other' };

function look(path: string, label: string): Found {
  try {
    const st = statSync(path);
    return st.isDirectory() ? { kind: 'directory' } : st.isFile() ? { kind: 'file' } : { kind: 'other' };
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ENOENT') return { kind: 'absent' };
    if (code === 'ENOTDIR') {
      throw new ConfigError(`${label}: ${path}: a part of the path is a file, not a directory`, {
        reason: 'bad-path',
        fix: `give ${label} a path whose parents are directories`,
      });
    }
    if (code === 'EACCES') {
      throw new ConfigError(`${label}: cannot reach ${path}: permission denied on a directory of the path`, {
        reason: 'bad-path',
        fix: 'run as a user who can read that directory, or choose another path',
      });
    }
    throw new ConfigError(`${label}: cannot check ${path}: ${(error as Error).message}`, { reason: 'bad-path' });
  }
}

/**
 * A path that does not exist yet can be created: its nearest existing parent is a directory this
 * user can write. Returns that directory.
 */
export function checkCreatable(path: string, label: string, flag = label): string {
  let dir = dirname(resolve(path));
  for (;;) {
    const found = look(dir, label);
    if (found.kind === 'directory') break;
    if (found.kind !== 'absent') {
      throw new ConfigError(`${label}: cannot create ${path}: ${dir} is a file, not a directory`, {
        reason: 'bad-path',
        fix: `give ${flag} a path whose parents are directories`,
      });
    }
    if (dirname(dir) === dir) break;
    dir = dirname(dir);
  }
  if (!writableDirectory(dir)) {
    throw new ConfigError(`${label}: cannot create ${path}: the directory ${dir} is not writable by this user`, {
      reason: 'bad-path',
      fix: `give ${flag} a path in a directory you can write, or run as a user who can write ${dir}`,
    });
  }
  return dir;
}

/** A file the command will write (created or replaced): not a directory, and writable. */
export function checkOutputFile(path: string, label: string, example: string): void {
  const found = look(path, label);
  if (found.kind === 'directory') {
    throw new ConfigError(`${label}: ${path} is a directory; ${label} names the file to write`, {
      reason: 'bad-path',
      fix: `name a file, e.g. ${label} ${resolve(path, example)}`,
    });
  }
  if (found.kind === 'other')
    throw new ConfigError(`${label}: ${path} is not a regular file`, { reason: 'bad-path', fix: `name a file, e.g. ${label} ${example}` });
  if (found.kind === 'absent') {
    checkCreatable(path, label);
    return;
  }
  try {
    accessSync(path, constants.W_OK);
  } catch {
    throw new ConfigError(`${label}: ${path} exists and is read-only for this user`, {
      reason: 'bad-path',
      fix: `make it writable, or name another file with ${label}`,
    });
  }
}

/** A directory the command writes into (created when absent): not a file, and writable. */
export function checkOutputDirectory(path: string, label: string): void {
  const found = look(path, label);
  if (found.kind === 'absent') {
    checkCreatable(path, label);
    return;
  }
  if (found.kind !== 'directory') {
    throw new ConfigError(`${label}: ${path} is a file, not a directory`, {
      reason: 'bad-path',
      fix: `give ${label} a directory (it is created when missing)`,
    });
  }
  if (!writableDirectory(path)) {
    throw new ConfigError(`${label}: the directory ${path} is not writable by this user`, {
      reason: 'bad-path',
      fix: `make it writable, or give ${label} another directory`,
    });
  }
}

/** A directory the command reads: it exists and this user can list it. */
export function checkInputDirectory(path: string, label: string, fix: string): void {
  const found = look(path, label);
  if (found.kind === 'absent') throw new ConfigError(`${label}: no directory at ${path}`, { reason: 'bad-path', fix });
  if (found.kind !== 'directory') throw new ConfigError(`${label}: ${path} is a file, not a directory`, { reason: 'bad-path', fix });
  try {
    accessSync(path, constants.R_OK | constants.X_OK);
  } catch {
    throw new ConfigError(`${label}: cannot read the directory ${path} (permission denied)`, {
      reason: 'bad-path',
      fix: 'run as a user who can read it, or give another path',
    });
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * `--source git:PATH` names a clone's top level, read from the file system alone (no git process
 * before the run starts): `.git` in it (a directory, or a file for a worktree), or a bare
 * repository (HEAD, objects/, refs/). A subdirectory of a clone is refused with the clone's top
 * level, since git would silently read the whole repository. git itself checks again when it
 * opens the clone.
 */
export function checkSourceClone(path: string): void {
  const full = resolve(path);
  if (existsSync(join(full, '.git'))) return;
  if (existsSync(join(full, 'HEAD')) && isDirectory(join(full, 'objects')) && isDirectory(join(full, 'refs'))) return;
  for (let dir = dirname(full); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) {
      throw new ConfigError(
        `--source: ${path} is the subdirectory ${full.slice(dir.length + 1)}/ of the repository at ${dir}, not a clone's top level`,
        {
          reason: 'invalid-flags',
          fix: `pass --source git:${dir} (perfmine reads the whole repository's history)`,
        },
      );
    }
  }
  throw new ConfigError(`--source: ${path} is not a git repository (no .git in it)`, {
    reason: 'invalid-flags',
    fix: 'point --source git:PATH at a clone',
  });
}
