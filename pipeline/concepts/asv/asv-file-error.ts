import type { z } from 'zod';
import { ItemError } from '../../errors.js';
import { formatJsonPath, TolerantJsonError, type JsonPath } from './tolerant-json.js';

/**
 * A malformed asv file: one item (one measurement) cannot be used. The message always reads
 * `<file>: <field>: <problem>`, so the operator can open the file at the right place.
 */
export function asvFileError(source: string, path: JsonPath, problem: string, cause?: unknown): ItemError {
  return new ItemError('asv-file-malformed', `${source}: ${formatJsonPath(path)}: ${problem}`, cause === undefined ? {} : { cause });
}

/** The first zod issue as an asv file error, its path prefixed with where the value sat. */
export function asvSchemaError(source: string, prefix: JsonPath, error: z.ZodError, label?: string): ItemError {
  const issue = error.issues[0];
  const lead = label === undefined ? '' : `${label}: `;
  if (!issue) return asvFileError(source, prefix, `${lead}invalid value`, error);
  const path = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  return asvFileError(source, path, lead + issue.message, error);
}

/** A JSON syntax error as an asv file error. */
export function asvSyntaxError(source: string, error: TolerantJsonError): ItemError {
  return asvFileError(source, error.path, `${error.detail} (line ${error.line}, column ${error.column})`, error);
}
