import { resolve } from 'node:path';

/** The database a command uses when neither --db, PERFMINE_DB nor the config file names one. */
export const DEFAULT_DB = 'perfmine.db';

/**
 * `template` with the database path in place of `%s` when the command uses another database than
 * the default `./perfmine.db`, else ''. Commands print it so that what they show is never taken
 * for the default database's.
 */
export function describeDb(path: string, template = ' (database %s)'): string {
  return resolve(path) === resolve(DEFAULT_DB) ? '' : template.replace('%s', path);
}

/** On stderr (stdout stays the listing): which database a listing comes from, when not the default. */
export function noteDb(path: string): void {
  const note = describeDb(path, 'perfmine: reading the database %s');
  if (note) process.stderr.write(`${note}\n`);
}
