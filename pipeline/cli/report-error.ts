import { CommanderError } from 'commander';
import { databaseErrorOf } from '../../cache/database-path.js';
import { ConfigError, EXIT, exitCodeOf, PerfmineError } from '../errors.js';

/** File-system errors that say something about this machine (permissions, space), never about perfmine's code. */
const FS_FIXES: Readonly<Record<string, string>> = {
  EACCES: 'run as a user who may write there, or point the flag or config key that names this path elsewhere',
  EPERM: 'run as a user who may change it, or point the flag or config key that names this path elsewhere',
  EROFS: 'the file system is mounted read-only: point the flag or config key that names this path at a writable one',
  ENOSPC: 'free space on that disk, then run the same command again (finished items are kept)',
  EDQUOT: 'your disk quota is used up: free space, then run the same command again',
};

/**
 * An error that escaped the checks made before work starts but is this machine's, not a bug (a
 * disk that filled up, a permission changed meanwhile): the ConfigError to print, or null.
 */
export function environmentProblem(error: unknown): ConfigError | null {
  const database = databaseErrorOf('the database (--db)', error);
  if (database) return database;
  const e = error as NodeJS.ErrnoException | undefined;
  const fix = typeof e?.code === 'string' ? FS_FIXES[e.code] : undefined;
  if (!fix || !(error instanceof Error)) return null;
  return new ConfigError(`${e!.path ?? 'a file'}: ${error.message}`, { reason: e!.code!.toLowerCase(), fix });
}

/** Prints an error the way every command does (on stderr, with its fix) and returns its exit code. */
export function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT.ok;
    if (error.code === 'commander.executeSubCommandAsync') return EXIT.ok;
    return EXIT.config;
  }
  if (error instanceof ConfigError) {
    for (const line of error.issues) process.stderr.write(`${line}\n`);
    if (error.fix) process.stderr.write(`fix: ${error.fix}\n`);
    return EXIT.config;
  }
  if (error instanceof PerfmineError) {
    process.stderr.write(`error (${error.kind}, ${error.reason}): ${error.message}\n`);
    if (error.fix) process.stderr.write(`fix: ${error.fix}\n`);
    return exitCodeOf(error);
  }
  const environment = environmentProblem(error);
  if (environment) return reportError(environment);
  process.stderr.write(`internal error (a bug in perfmine; please report it):\n${(error as Error)?.stack ?? String(error)}\n`);
  return EXIT.internal;
}
