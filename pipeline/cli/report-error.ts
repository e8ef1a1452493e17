import { CommanderError } from 'commander';
import { ConfigError, EXIT, exitCodeOf, PerfmineError } from '../errors.js';

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
  process.stderr.write(`internal error (a bug in perfmine; please report it):\n${(error as Error)?.stack ?? String(error)}\n`);
  return EXIT.internal;
}
