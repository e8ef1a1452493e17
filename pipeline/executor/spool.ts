import { accessSync, constants, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { ResultFile } from './decide.js';

/**
 * The spool: a directory on a filesystem every node shares. Each job has its own directory,
 * named after its job name: `input.json` (written by the coordinator before sbatch),
 * `result.json` (written by the worker, renamed into place whole), `slurm.out` (the job's log).
 */

export const jobInputSchema = z
  .object({
    version: z.literal(1),
    stage: z.string(),
    key: z.string(),
    /** Which worker handler runs it (a stage name, or `prepared`). */
    kind: z.string(),
    payload: z.unknown(),
  })
  .strict();
export type JobInput = z.infer<typeof jobInputSchema>;

export const jobResultSchema = z.discriminatedUnion('ok', [
  z.object({ version: z.literal(1), jobName: z.string(), ok: z.literal(true), output: z.unknown() }).strict(),
  z
    .object({
      version: z.literal(1),
      jobName: z.string(),
      ok: z.literal(false),
      error: z.object({ kind: z.string(), reason: z.string(), message: z.string() }).strict(),
    })
    .strict(),
]);
export type JobResult = z.infer<typeof jobResultSchema>;

export function jobDir(spool: string, jobName: string): string {
  return join(resolve(spool), 'jobs', jobName);
}

/** Writes a file whole or not at all: a temporary name in the same directory, then rename. */
export function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export function writeJobInput(spool: string, jobName: string, input: JobInput): string {
  const dir = jobDir(spool, jobName);
  mkdirSync(dir, { recursive: true });
  writeAtomically(join(dir, 'input.json'), JSON.stringify(input));
  return dir;
}

export function readJobInput(dir: string): JobInput {
  return jobInputSchema.parse(JSON.parse(readFileSync(join(dir, 'input.json'), 'utf8')));
}

export function writeJobResult(dir: string, result: JobResult): void {
  writeAtomically(join(dir, 'result.json'), JSON.stringify(result));
}

/** The job's result, if its file is there and whole. */
export function readJobResult(spool: string, jobName: string): { file: ResultFile; result?: JobResult; problem?: string } {
  const path = join(jobDir(spool, jobName), 'result.json');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { file: 'missing' };
    return { file: 'unreadable', problem: (error as Error).message };
  }
  try {
    const result = jobResultSchema.parse(JSON.parse(text));
    if (result.jobName !== jobName) return { file: 'unreadable', problem: `the result names job ${result.jobName}` };
    return { file: 'ok', result };
  } catch (error) {
    return { file: 'unreadable', problem: error instanceof Error ? error.message.slice(0, 300) : String(error) };
  }
}

/** Whether a result file exists (cheap: one stat per job per poll). */
export function hasResultFile(spool: string, jobName: string): boolean {
  try {
    return statSync(join(jobDir(spool, jobName), 'result.json')).isFile();
  } catch {
    return false;
  }
}

export function removeJobDir(spool: string, jobName: string): void {
  rmSync(jobDir(spool, jobName), { recursive: true, force: true });
}

/** Before anything is submitted: the spool exists (or can be made) and this process can write in it. */
export function checkSpoolWritable(spool: string): void {
  const dir = resolve(spool);
  const probe = join(dir, 'jobs', `.probe-${process.pid}`);
  try {
    mkdirSync(join(dir, 'jobs'), { recursive: true });
    accessSync(join(dir, 'jobs'), constants.W_OK);
    writeFileSync(probe, 'probe');
    rmSync(probe, { force: true });
  } catch (error) {
    throw new ConfigError(
      `executor.slurm.spool: ${dir} is not writable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); nothing was submitted`,
      {
        reason: 'spool-not-writable',
        fix: 'point executor.slurm.spool at a directory on a filesystem shared by this machine and every compute node, writable by you',
        cause: error,
      },
    );
  }
}

/** A job array's task: the array's Slurm job name and the task's index (`array.json` in the item's job directory). */
export const arrayMemberSchema = z.object({ array: z.string(), index: z.number().int().nonnegative() }).strict();
export type ArrayMember = z.infer<typeof arrayMemberSchema>;

export function writeArrayMember(spool: string, jobName: string, member: ArrayMember): void {
  writeAtomically(join(jobDir(spool, jobName), 'array.json'), JSON.stringify(member));
}

/** Which array task ran this item, or null (a job of its own, or no file). */
export function readArrayMember(spool: string, jobName: string): ArrayMember | null {
  try {
    return arrayMemberSchema.parse(JSON.parse(readFileSync(join(jobDir(spool, jobName), 'array.json'), 'utf8')));
  } catch {
    return null;
  }
}
