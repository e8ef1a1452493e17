import { execFile, execFileSync } from 'node:child_process';
import { z } from 'zod';
import { ConfigError, OutsideServiceError } from '../errors.js';

/**
 * The Slurm adapter: the only code that talks to Slurm. It shells out to sbatch, squeue, sacct
 * and scancel (the commands every cluster has; no REST daemon needed) and parses their
 * pipe-separated output with zod.
 */

/** What one sbatch call asks for. */
export interface SubmitRequest {
  readonly jobName: string;
  /** The batch script (its first line `#!/bin/bash`). */
  readonly script: string;
  /** sbatch --output (the job's stdout and stderr). */
  readonly output: string;
  readonly chdir?: string;
  readonly partition?: string | undefined;
  readonly account?: string | undefined;
  readonly timeLimit: string;
  readonly cpus: number;
  readonly memoryMb?: number | undefined;
  readonly exclusive: boolean;
  readonly extraArgs: readonly string[];
  /** A job array of this many tasks (`--array=0-N-1`; the script picks its item by SLURM_ARRAY_TASK_ID); unset: one job. */
  readonly arrayTasks?: number;
}

/** A job's state as squeue or sacct gives it (first word: `CANCELLED by 0` is CANCELLED). */
export interface JobState {
  readonly jobId: string;
  readonly jobName: string;
  readonly state: string;
  /** `code:signal` from sacct; null from squeue. */
  readonly exitCode: string | null;
}

/** The sbatch arguments of a request (pure; docs/slurm.md's worked example shows them). */
export function sbatchArgs(r: SubmitRequest): string[] {
  const args = [
    '--parsable',
    `--job-name=${r.jobName}`,
    `--output=${r.output}`,
    `--time=${r.timeLimit}`,
    `--cpus-per-task=${r.cpus}`,
    '--ntasks=1',
    '--nodes=1',
  ];
  if (r.arrayTasks !== undefined && r.arrayTasks > 1) args.push(`--array=0-${r.arrayTasks - 1}`);
  if (r.chdir) args.push(`--chdir=${r.chdir}`);
  if (r.partition) args.push(`--partition=${r.partition}`);
  if (r.account) args.push(`--account=${r.account}`);
  if (r.memoryMb !== undefined) args.push(`--mem=${r.memoryMb}`);
  if (r.exclusive) args.push('--exclusive');
  // A job lost to a node failure is resubmitted by the coordinator, not requeued by Slurm under the same id.
  args.push('--no-requeue');
  args.push(...r.extraArgs);
  return args;
}

const jobIdSchema = z.string().regex(/^\d+(_\d+)?$/, 'a Slurm job id');

/** `--parsable` answers `ID` or `ID;cluster`. */
export function parseSbatch(stdout: string): string {
  const first = stdout.trim().split('\n').at(-1)?.split(';')[0]?.trim() ?? '';
  return jobIdSchema.parse(first);
}

const stateLine = z.tuple([jobIdSchema, z.string(), z.string().min(1), z.string()]);

/** Lines `id|name|state|exit` (squeue's have an empty exit). Sub-steps (`123.batch`) are skipped. */
export function parseStates(stdout: string): JobState[] {
  const out: JobState[] = [];
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    const fields = line.split('|');
    if (fields[0]?.includes('.')) continue;
    const [jobId, jobName, state, exit] = stateLine.parse(fields.slice(0, 4).concat(fields.length < 4 ? [''] : []));
    out.push({ jobId, jobName, state: state.split(/\s+/)[0]!.replace(/\+$/, ''), exitCode: exit === '' ? null : exit });
  }
  return out;
}

export interface SlurmOptions {
  /** Directory of the Slurm commands; default: found on PATH. */
  readonly binDir?: string;
  /** Per-call timeout. */
  readonly timeoutMs?: number;
}

export class SlurmAdapter {
  constructor(private readonly options: SlurmOptions = {}) {}

  private bin(name: string): string {
    return this.options.binDir ? `${this.options.binDir}/${name}` : name;
  }

  private run(name: string, args: readonly string[], input?: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = execFile(
        this.bin(name),
        [...args],
        { timeout: this.options.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (error) {
            const code = (error as NodeJS.ErrnoException).code;
            if (code === 'ENOENT') {
              reject(
                new ConfigError(`${name}: not found on PATH`, {
                  reason: 'slurm-missing',
                  fix: 'install the Slurm client commands (Debian: slurm-client), or run scripts/setup-slurm.sh to try a local cluster',
                }),
              );
              return;
            }
            reject(
              new OutsideServiceError(
                'slurm',
                `${name}-failed`,
                `${name} ${args.join(' ')}: ${(stderr || error.message).trim().slice(-500)}`,
                { retryable: true, cause: error },
              ),
            );
            return;
          }
          resolve(stdout);
        },
      );
      if (input !== undefined) child.stdin?.end(input);
    });
  }

  /** Submits a batch script; returns the job id. */
  async submit(request: SubmitRequest): Promise<string> {
    return parseSbatch(await this.run('sbatch', sbatchArgs(request), request.script));
  }

  /** The calling user's jobs the controller still holds (pending, running, and recently finished); a job array's tasks one per line (`123_4`). */
  async queue(): Promise<JobState[]> {
    return parseStates(await this.run('squeue', ['--noheader', '--me', '--states=all', '--array', '--format=%i|%j|%T|']));
  }

  /** Accounting records of these jobs (finished ones included); ids unknown to sacct are absent. */
  async accounting(jobIds: readonly string[]): Promise<JobState[]> {
    return this.sacct(jobIds, 200, (chunk) => [`--jobs=${chunk.join(',')}`]);
  }

  /** Accounting records of jobs by name (the crash between sbatch and recording its id). */
  async byName(names: readonly string[]): Promise<JobState[]> {
    return this.sacct(names, 100, (chunk) => ['--starttime=now-30days', `--name=${chunk.join(',')}`]);
  }

  /** sacct's allocation records, asked `size` selectors at a time (a command line has a limit). */
  private async sacct(selectors: readonly string[], size: number, select: (chunk: readonly string[]) => string[]): Promise<JobState[]> {
    const out: JobState[] = [];
    for (let i = 0; i < selectors.length; i += size) {
      const args = [
        '--noheader',
        '--parsable2',
        '--allocations',
        '--format=JobID,JobName,State,ExitCode',
        ...select(selectors.slice(i, i + size)),
      ];
      out.push(...parseStates(await this.run('sacct', args)));
    }
    return out;
  }

  async cancel(jobIds: readonly string[]): Promise<void> {
    if (jobIds.length > 0) await this.run('scancel', jobIds);
  }

  /** For a hard stop, which exits right after: cancels synchronously, ignoring errors. */
  cancelSync(jobIds: readonly string[]): void {
    if (jobIds.length === 0) return;
    try {
      execFileSync(this.bin('scancel'), [...jobIds], { timeout: 30_000, stdio: 'ignore' });
    } catch {
      // the jobs may have finished meanwhile; nothing else can be done on the way out
    }
  }

  /** `slurm 22.05.8`, from sbatch --version. */
  async version(command: 'sbatch' | 'squeue' | 'sacct' | 'scancel' = 'sbatch'): Promise<string> {
    return (await this.run(command, ['--version'])).trim();
  }
}
