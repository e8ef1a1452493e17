import { existsSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { configSchema, type Config } from '../config/schema.js';
import { readCredentials, secretValues, type Credentials } from '../credentials.js';
import { kindOf, PerfmineError } from '../errors.js';
import { createLogger, type Logger } from '../logging.js';
import { readJobInput, writeJobResult, type JobInput } from './spool.js';

/**
 * The worker: runs one job's item on a compute node and writes its result into the spool
 * (`perfmine worker --spool DIR --job NAME`). It never opens the SQLite store: what the item
 * needs comes in its input file, what it produced goes out in its result file.
 */

/**
 * Runs one kind of item on the node; returns the result (JSON) the coordinator ingests. `signal`
 * aborts when Slurm ends the job (SIGTERM: scancel, time limit, preemption).
 */
export type WorkerHandler = (input: JobInput, env: { readonly dir: string; readonly signal: AbortSignal }) => Promise<unknown>;

/**
 * `prepared`: a job whose result comes in its input (the coordinator's tests and benchmark).
 * `sleepSeconds` and `waitForFile` keep it running (to be cancelled, or killed by its time limit); `rawResult`
 * writes that text as the result file as it is (a truncated file); `exitCode` exits without a result.
 */
export const preparedPayloadSchema = z
  .object({
    output: z.unknown(),
    sleepSeconds: z.number().nonnegative().optional(),
    /** Runs until this file exists (a test releases it, or lets the time limit kill the job). */
    waitForFile: z.string().optional(),
    rawResult: z.string().optional(),
    exitCode: z.number().int().optional(),
  })
  .strict();
export type PreparedPayload = z.infer<typeof preparedPayloadSchema>;

const prepared: WorkerHandler = async (input, env) => {
  const p = preparedPayloadSchema.parse(input.payload);
  // Slurm's SIGTERM ends the waits (as it would a stage's containers)
  const wait = (ms: number) => sleep(ms, undefined, { signal: env.signal });
  if (p.sleepSeconds) await wait(p.sleepSeconds * 1000);
  while (p.waitForFile !== undefined && !existsSync(p.waitForFile)) await wait(200);
  env.signal.throwIfAborted();
  if (p.rawResult !== undefined) {
    writeFileSync(join(env.dir, 'result.json'), p.rawResult);
    process.exit(0);
  }
  if (p.exitCode !== undefined) process.exit(p.exitCode);
  return p.output;
};

/**
 * The handlers by kind. Extension point: synthesize, validate and score register theirs here
 * (their payload carries everything the item needs, their result everything the coordinator
 * records); a stage without one runs locally.
 */
export const WORKER_HANDLERS: Readonly<Record<string, WorkerHandler>> = { prepared };

/**
 * What a job's handler works with on its node: the coordinator's configuration (from the job's
 * input; it holds no secrets), this node's credentials (environment variables) and a JSON logger
 * into the job's log (stderr: slurm.out).
 */
export function nodeSession(config: unknown): { config: Config; credentials: Credentials; log: Logger } {
  const parsed = configSchema.parse(config, { jitless: true });
  const credentials = readCredentials(process.env);
  return { config: parsed, credentials, log: createLogger({ level: parsed.logLevel, format: 'json', secrets: secretValues(credentials) }) };
}

/** Runs the job in `dir`; returns the process exit code (0 once a result, success or item failure, is written). */
export async function runWorker(
  dir: string,
  jobName: string,
  handlers: Readonly<Record<string, WorkerHandler>> = WORKER_HANDLERS,
): Promise<number> {
  const input = readJobInput(dir);
  const handler = handlers[input.kind];
  if (!handler) {
    writeJobResult(dir, {
      version: 1,
      jobName,
      ok: false,
      error: { kind: 'config', reason: 'unknown-worker-kind', message: `this perfmine has no worker for ${input.kind}` },
    });
    return 0;
  }
  // Slurm ends a job with SIGTERM (then SIGKILL): the handler stops its containers, and no result
  // is written, so that the coordinator decides by the job's state (resubmits what was cancelled,
  // preempted or killed by its time limit) rather than recording the interruption as the item's failure.
  const abort = new AbortController();
  const onTerm = () => abort.abort(new Error('the job received SIGTERM'));
  process.once('SIGTERM', onTerm);
  try {
    const output = await handler(input, { dir, signal: abort.signal });
    if (abort.signal.aborted) return TERMINATED;
    writeJobResult(dir, { version: 1, jobName, ok: true, output });
  } catch (error) {
    if (abort.signal.aborted) return TERMINATED;
    const reason = error instanceof PerfmineError ? error.reason : 'worker-crashed';
    writeJobResult(dir, {
      version: 1,
      jobName,
      ok: false,
      error: { kind: kindOf(error), reason, message: error instanceof Error ? error.message : String(error) },
    });
  } finally {
    process.off('SIGTERM', onTerm);
  }
  return 0;
}

/** The exit code of a job ended by SIGTERM (128 + 15), with no result written. */
export const TERMINATED = 143;
