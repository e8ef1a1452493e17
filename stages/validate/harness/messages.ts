import { z } from 'zod';
import { benchmarkEntrySchema } from '../../../pipeline/concepts/asv/benchmarks.js';

/**
 * The wire protocol of the harness's `serve` mode (python/perfmine_harness.py):
 * JSON lines, one command in per line on stdin, one answer out per line on stdout. Everything the
 * benchmarks print goes to stderr. Checked with zod where it comes in. Pure.
 */

export const HARNESS_PROTOCOL = 1;

const benchmarkInfo = benchmarkEntrySchema.extend({
  timeout: z.number().nullable().optional(),
  sample_time: z.number().nullable().optional(),
});
export type HarnessBenchmark = z.infer<typeof benchmarkInfo>;

export const workloadRef = z.object({ name: z.string().min(1), benchmark: z.string().min(1), param: z.number().int().nonnegative() });
export type WorkloadRef = z.infer<typeof workloadRef>;

export const readyMessage = z.object({
  event: z.literal('ready'),
  protocol: z.number().int(),
  python: z.string(),
  pid: z.number().int().optional(),
  /** Seconds the worker took to import (and discover) the suite; absent from older harnesses. */
  import_seconds: z.number().nonnegative().optional(),
  benchmarks: z.record(z.string(), benchmarkInfo),
  workloads: z.array(workloadRef),
  /** Each listed benchmark's module (absent from older harnesses). */
  module_of: z.record(z.string(), z.string()).optional(),
  /** Each imported module's own import seconds (absent from older harnesses). */
  module_import_seconds: z.record(z.string(), z.number().nonnegative()).optional(),
});
export type ReadyMessage = z.infer<typeof readyMessage>;

export const fatalMessage = z.object({
  event: z.literal('fatal'),
  reason: z.string(),
  message: z.string(),
});
export type FatalMessage = z.infer<typeof fatalMessage>;

export const startMessage = z.discriminatedUnion('event', [readyMessage, fatalMessage]);

/** What a batch can end as besides a measurement. */
export const FAILURE_STATUSES = ['skipped', 'failed', 'timeout', 'crashed', 'not-a-number', 'unknown'] as const;
export type FailureStatus = (typeof FAILURE_STATUSES)[number];

/**
 * Where a batch's time went inside the worker, in seconds (the harness's `account`): setup
 * (setup_cache when the batch ran it, the benchmark's instance, its setups and teardowns, those
 * redone between samples too), the warm-up before the first sample (number's calibration
 * included), and the timed samples. Absent from older harnesses and from `timeout` and `crashed`
 * answers (the supervisor's, not the worker's).
 */
export const batchAccount = z.object({
  setup: z.number().nonnegative(),
  warmup: z.number().nonnegative(),
  samples: z.number().nonnegative(),
});
export type BatchAccount = z.infer<typeof batchAccount>;

const timeAnswer = z.object({
  id: z.number().int(),
  ok: z.literal(true),
  kind: z.literal('time'),
  samples: z.array(z.number().positive()).min(1),
  number: z.number().int().positive(),
  elapsed: z.number().nonnegative().optional(),
  account: batchAccount.optional(),
});
const valueAnswer = z.object({
  id: z.number().int(),
  ok: z.literal(true),
  kind: z.enum(['memory', 'peakmemory', 'track']),
  value: z.number(),
  elapsed: z.number().nonnegative().optional(),
  account: batchAccount.optional(),
});
const failureAnswer = z.object({
  id: z.number().int().nullable(),
  ok: z.literal(false),
  status: z.enum(FAILURE_STATUSES),
  message: z.string(),
  elapsed: z.number().nonnegative().optional(),
  account: batchAccount.optional(),
});
export const batchAnswer = z.union([timeAnswer, valueAnswer, failureAnswer]);
export type BatchAnswer = z.infer<typeof batchAnswer>;
export type FailureAnswer = z.infer<typeof failureAnswer>;

export interface BatchCommand {
  readonly id: number;
  readonly op: 'batch';
  readonly benchmark: string;
  readonly param: number;
  readonly samples: number;
  /** Calls per sample; 0: calibrate as asv does (and warm up). */
  readonly number: number;
  /** Warm-up seconds before the samples; null: asv's rule. */
  readonly warmup: number | null;
  readonly sample_time: number | null;
  readonly timeout: number | null;
  /** `wall`: the benchmark's timer (asv's default, the wall clock); `cpu`: the worker's CPU time. */
  readonly clock: 'wall' | 'cpu';
}

/**
 * A batch's result as the driver keeps it: samples (seconds per call, or one value), or why none;
 * with the harness's account of its time when the harness sent one.
 */
export type BatchResult = (
  | { readonly ok: true; readonly samples: readonly number[]; readonly number: number | null }
  | { readonly ok: false; readonly status: FailureStatus; readonly message: string }
) & { readonly account?: BatchAccount };

const restartAnswer = z.union([
  z.object({
    id: z.number().int(),
    ok: z.literal(true),
    worker_pid: z.number().int().optional(),
    elapsed: z.number().nonnegative().optional(),
    import_seconds: z.number().nonnegative().nullable().optional(),
  }),
  failureAnswer,
]);

/** A restart's outcome: a fresh worker process (with its suite import's seconds, when told), or why none could start. */
export type RestartResult = { readonly ok: true; readonly importSeconds?: number } | { readonly ok: false; readonly message: string };

/** The driver's reading of a restart's answer line. */
export function readRestartAnswer(line: string): RestartResult & { readonly id: number | null } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return { id: null, ok: false, message: `not a protocol line: ${line.slice(0, 200)}` };
  }
  const answer = restartAnswer.safeParse(parsed);
  if (!answer.success) return { id: null, ok: false, message: `unexpected answer ${line.slice(0, 200)}` };
  const a = answer.data;
  if (!a.ok) return { id: a.id, ok: false, message: a.message };
  return typeof a.import_seconds === 'number' ? { id: a.id, ok: true, importSeconds: a.import_seconds } : { id: a.id, ok: true };
}

/** The driver's reading of an answer line (a line that is not one is an `unknown` failure). */
export function readBatchAnswer(line: string): BatchResult & { readonly id: number | null } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return { id: null, ok: false, status: 'unknown', message: `not a protocol line: ${line.slice(0, 200)}` };
  }
  const answer = batchAnswer.safeParse(parsed);
  if (!answer.success)
    return {
      id: null,
      ok: false,
      status: 'unknown',
      message: `unexpected answer ${line.slice(0, 200)}: ${answer.error.issues[0]?.message ?? ''}`,
    };
  const a = answer.data;
  const account = a.account ? { account: a.account } : {};
  if (!a.ok) return { id: a.id, ok: false, status: a.status, message: a.message, ...account };
  if (a.kind === 'time') return { id: a.id, ok: true, samples: a.samples, number: a.number, ...account };
  if (!Number.isFinite(a.value)) return { id: a.id, ok: false, status: 'not-a-number', message: `${a.kind} value ${a.value}`, ...account };
  return { id: a.id, ok: true, samples: [a.value], number: null, ...account };
}

const fingerprintAnswer = z.union([
  z.object({
    id: z.number().int(),
    ok: z.literal(true),
    kind: z.literal('fingerprint'),
    code: z.array(z.tuple([z.string(), z.number().int(), z.number().int()])),
    opaque: z.boolean().optional(),
    elapsed: z.number().optional(),
  }),
  failureAnswer,
]);
const outlineAnswer = z.object({
  id: z.number().int(),
  ok: z.literal(true),
  kind: z.literal('outline'),
  files: z.record(z.string(), z.array(z.tuple([z.enum(['def', 'class']), z.string(), z.number().int(), z.number().int()])).nullable()),
});
const modulesAnswer = z.union([
  z.object({ id: z.number().int(), ok: z.literal(true), kind: z.literal('modules'), files: z.array(z.string()) }),
  failureAnswer,
]);

/** What a workload ran (its code objects), or why that is not known. */
export type FingerprintResult =
  | { readonly ok: true; readonly code: readonly (readonly [string, number, number])[]; readonly opaque: boolean }
  | { readonly ok: false; readonly status: FailureStatus; readonly message: string };
export type OutlineResult = Readonly<Record<string, readonly (readonly ['def' | 'class', string, number, number])[] | null>>;

/** An answer line of a command of the given kind, read with its schema; a line that is not one gives the failure it is. */
function readAnswer<T>(
  line: string,
  schema: z.ZodType<T>,
):
  | (T & { readonly id: number | null })
  | { readonly id: number | null; readonly ok: false; readonly status: 'unknown'; readonly message: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return { id: null, ok: false, status: 'unknown', message: `not a protocol line: ${line.slice(0, 200)}` };
  }
  const answer = schema.safeParse(parsed);
  if (answer.success) return answer.data as T & { readonly id: number | null };
  const id = typeof (parsed as { id?: unknown })?.id === 'number' ? (parsed as { id: number }).id : null;
  return { id, ok: false, status: 'unknown', message: `unexpected answer ${line.slice(0, 200)}: ${answer.error.issues[0]?.message ?? ''}` };
}

export function readFingerprintAnswer(line: string): FingerprintResult & { readonly id: number | null } {
  const a = readAnswer(line, fingerprintAnswer);
  if (!a.ok) return a;
  return { id: a.id, ok: true, code: a.code, opaque: a.opaque ?? false };
}

export function readOutlineAnswer(line: string): {
  readonly id: number | null;
  readonly files: OutlineResult | null;
  readonly message?: string;
} {
  const a = readAnswer(line, outlineAnswer);
  return a.ok ? { id: a.id, files: a.files } : { id: a.id, files: null, message: a.message };
}

export function readModulesAnswer(line: string): {
  readonly id: number | null;
  readonly files: readonly string[] | null;
  readonly message?: string;
} {
  const a = readAnswer(line, modulesAnswer);
  return a.ok ? { id: a.id, files: a.files } : { id: a.id, files: null, message: a.message };
}

/** The harness's first line: ready with its suite, or fatal with why. */
export function readStart(line: string): ReadyMessage | FatalMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return { event: 'fatal', reason: 'protocol', message: `the harness's first line is not JSON: ${line.slice(0, 300)}` };
  }
  const start = startMessage.safeParse(parsed);
  if (!start.success)
    return {
      event: 'fatal',
      reason: 'protocol',
      message: `the harness's first line is not a ready or fatal event: ${start.error.issues[0]?.message ?? ''}`,
    };
  return start.data;
}
