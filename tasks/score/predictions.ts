import { z } from 'zod';

/**
 * Agents' predictions in SWE-bench's format: JSON Lines, or a JSON array, of
 * `{ instance_id, model_name_or_path, model_patch }`. Each row is checked on its own: a row with
 * a wrong field, an unknown instance id, a duplicate (the same model and instance twice), or a
 * patch over the size limit is rejected with a named reason and the other rows go on. An empty
 * patch is accepted here and scored as failed (`empty-patch`) by the scorer. Pure.
 */

export const predictionSchema = z.object({
  instance_id: z.string().min(1),
  model_name_or_path: z.string().min(1),
  model_patch: z.string(),
});

export interface Prediction {
  /** 1-based line (JSONL) or element (JSON array) number. */
  readonly row: number;
  readonly instanceId: string;
  readonly model: string;
  readonly patch: string;
}

export const REJECTION_REASONS = [
  'invalid-json',
  'invalid-prediction',
  'unknown-instance',
  'duplicate-prediction',
  'patch-too-large',
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export interface RejectedRow {
  readonly row: number;
  /** What the row said, where it said it. */
  readonly instanceId: string | null;
  readonly model: string | null;
  readonly reason: RejectionReason;
  readonly message: string;
}

export interface ParsedPredictions {
  readonly predictions: readonly Prediction[];
  readonly rejected: readonly RejectedRow[];
}

/** The default limit on one patch: 10 MiB (an expert patch passes filter's size limits far below it). */
export const DEFAULT_MAX_PATCH_BYTES = 10 * 1024 * 1024;

export class PredictionsFileError extends Error {}

function stringField(value: unknown, key: string): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = (value as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : null;
}

/** The file's rows as parsed JSON values (an unparseable JSONL line: an Error in its place); a JSON array that does not parse throws. */
function rowsOf(text: string): { row: number; value: unknown }[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      throw new PredictionsFileError(`not a JSON array: ${(error as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new PredictionsFileError('not a JSON array');
    return parsed.map((value, i) => ({ row: i + 1, value }));
  }
  const out: { row: number; value: unknown }[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push({ row: i + 1, value: JSON.parse(line) });
    } catch (error) {
      out.push({ row: i + 1, value: new Error((error as Error).message) });
    }
  });
  return out;
}

export function parsePredictions(text: string, known: ReadonlySet<string>, options: { maxPatchBytes?: number } = {}): ParsedPredictions {
  const max = options.maxPatchBytes ?? DEFAULT_MAX_PATCH_BYTES;
  const predictions: Prediction[] = [];
  const rejected: RejectedRow[] = [];
  const seen = new Map<string, number>();
  for (const { row, value } of rowsOf(text)) {
    const instanceId = stringField(value, 'instance_id');
    const model = stringField(value, 'model_name_or_path');
    const reject = (reason: RejectionReason, message: string) => rejected.push({ row, instanceId, model, reason, message });
    if (value instanceof Error) {
      reject('invalid-json', `row ${row}: not JSON: ${value.message}`);
      continue;
    }
    const parsed = predictionSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      reject('invalid-prediction', `row ${row}: ${issue.path.join('.') || '(row)'}: ${issue.message}`);
      continue;
    }
    const p = parsed.data;
    if (!known.has(p.instance_id)) {
      reject('unknown-instance', `row ${row}: ${p.instance_id} is not an emitted task`);
      continue;
    }
    const bytes = Buffer.byteLength(p.model_patch, 'utf8');
    if (bytes > max) {
      reject('patch-too-large', `row ${row}: the patch of ${p.instance_id} has ${bytes} bytes, over the limit of ${max}`);
      continue;
    }
    const key = `${p.model_name_or_path}\u0000${p.instance_id}`;
    const first = seen.get(key);
    if (first !== undefined) {
      reject('duplicate-prediction', `row ${row}: ${p.model_name_or_path} already has a prediction for ${p.instance_id} (row ${first})`);
      continue;
    }
    seen.set(key, row);
    predictions.push({ row, instanceId: p.instance_id, model: p.model_name_or_path, patch: p.model_patch });
  }
  return { predictions, rejected };
}
