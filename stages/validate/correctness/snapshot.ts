import { z } from 'zod';

/**
 * The reading of what the snapshot helper (python/perfmine_snapshot.py)
 * writes: the record of the base's benchmark return values, and the expert's comparison against
 * it. Pure.
 */

const importError = z.object({ module: z.string(), error: z.string() });

export const snapshotRecordSchema = z.object({
  version: z.literal(1),
  mode: z.literal('record'),
  python: z.string(),
  importErrors: z.array(importError),
  workloads: z.array(
    z.object({
      name: z.string(),
      status: z.enum(['ok', 'error', 'skipped']),
      repr: z.string().nullable(),
      hash: z.string().nullable(),
      pickle: z.string().nullable(),
      /** Why the value has no defined equality (nan, identity-equality, nondeterministic, ...). */
      skip: z.string().nullable(),
      error: z.string().nullable(),
    }),
  ),
});
export type SnapshotRecord = z.infer<typeof snapshotRecordSchema>;

export const snapshotCompareSchema = z.object({
  version: z.literal(1),
  mode: z.literal('compare'),
  python: z.string(),
  importErrors: z.array(importError),
  results: z.array(z.object({ name: z.string(), outcome: z.enum(['equal', 'mismatch', 'skipped']), reason: z.string().nullable() })),
  counts: z.object({ equal: z.number().int(), mismatch: z.number().int(), skipped: z.number().int() }),
});
export type SnapshotComparison = z.infer<typeof snapshotCompareSchema>;

export class SnapshotFormatError extends Error {
  override readonly name = 'SnapshotFormatError';
}

function parseWith<T>(schema: z.ZodType<T>, text: string, what: string): T {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new SnapshotFormatError(`${what}: not JSON: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SnapshotFormatError(`${what}: ${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

export function parseSnapshotRecord(text: string): SnapshotRecord {
  return parseWith(snapshotRecordSchema, text, 'snapshot record');
}

export function parseSnapshotComparison(text: string): SnapshotComparison {
  return parseWith(snapshotCompareSchema, text, 'snapshot comparison');
}

/** What the decision needs from the snapshot check. */
export interface SnapshotSummary {
  readonly baseImportErrors: readonly { module: string; error: string }[];
  readonly expertImportErrors: readonly { module: string; error: string }[];
  readonly equal: number;
  readonly skipped: number;
  readonly mismatches: readonly { name: string; reason: string | null }[];
}

export function summarizeSnapshot(record: SnapshotRecord, comparison: SnapshotComparison | null): SnapshotSummary {
  return {
    baseImportErrors: record.importErrors,
    expertImportErrors: comparison?.importErrors ?? [],
    equal: comparison?.counts.equal ?? 0,
    skipped: comparison?.counts.skipped ?? 0,
    mismatches: (comparison?.results ?? []).filter((r) => r.outcome === 'mismatch').map((r) => ({ name: r.name, reason: r.reason })),
  };
}
