import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ExecutorJobs } from '../../cache/executor-jobs.js';
import type { Db } from '../../cache/store.js';
import type { SlurmConfig } from '../config/schema.js';
import { ConfigError, ItemError } from '../errors.js';
import { sha256 } from '../hash.js';
import type { Logger } from '../logging.js';
import { packagePath } from '../package-root.js';
import type { JobState, SlurmAdapter, SubmitRequest } from '../services/slurm.js';
import { attemptsUsed, decideJob, resumeItem, type ResultFile } from './decide.js';
import {
  checkSpoolWritable,
  hasResultFile,
  jobDir,
  readArrayMember,
  readJobResult,
  writeArrayMember,
  writeJobInput,
  type ArrayMember,
} from './spool.js';

/** One item to run as a Slurm job. */
export interface RemoteJob {
  readonly key: string;
  readonly inputHash: string;
  /** The worker handler that runs it on the node. */
  readonly kind: string;
  /** What the handler gets (JSON). */
  readonly payload: unknown;
}

export interface RemoteHooks {
  /** Records a successful job's output; runs inside the transaction that marks its job ingested. A throw fails the item. */
  ingest(key: string, output: unknown): void;
  /** Records the item as failed (its last attempt was lost, or its result was unusable). */
  fail(key: string, error: unknown): void;
}

export interface SlurmExecutorOptions {
  readonly db: Db;
  readonly slurm: SlurmAdapter;
  readonly config: SlurmConfig;
  readonly stage: string;
  readonly runId: number | null;
  readonly log: Logger;
  /** First Ctrl-C: nothing new is submitted; jobs in flight are followed to their end. */
  readonly drain?: AbortSignal | undefined;
  /** Second Ctrl-C: the coordinator's jobs are cancelled. */
  readonly hard?: AbortSignal | undefined;
}

export interface RemoteReport {
  readonly submitted: number;
  readonly adopted: number;
  readonly ingested: number;
  readonly failed: number;
  readonly resubmitted: number;
  readonly notStarted: number;
  readonly cancelled: number;
  /** Wall time spent in sbatch, in squeue/sacct polls (with the spool reads), and in ingest transactions. */
  readonly submitMs: number;
  /** Wall time of the submission rounds (sbatch calls run submitConcurrency at a time). */
  readonly submitWallMs: number;
  readonly pollMs: number;
  readonly ingestMs: number;
  /** Wall time spent waiting between polls (the rest of the run is the coordinator's own work). */
  readonly idleMs: number;
}

interface Tracked {
  readonly job: RemoteJob;
  attempt: number;
  firstCounted: number;
  jobName: string;
  jobId: string | null;
  unknownPolls: number;
  lastState: string | null;
}

/** The default job command: this node binary running this perfmine's compiled CLI (same paths on the nodes). */
export function defaultWorkerCommand(): string[] {
  return [process.execPath, packagePath('dist', 'pipeline', 'cli', 'entry.js'), 'worker'];
}

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The batch script of one job (pure). */
export function batchScript(command: readonly string[], spool: string, jobName: string): string {
  const words = [...command, '--spool', resolve(spool), '--job', jobName].map(shellQuote).join(' ');
  return `#!/bin/bash\n# perfmine worker: one item; its input and result live in the spool\nexec ${words}\n`;
}

/**
 * The batch script of a job array (pure): task i runs the worker for the i-th job name, its log in
 * that job's own directory (as a single job's).
 */
export function arrayScript(command: readonly string[], spool: string, jobNames: readonly string[]): string {
  const words = [...command, '--spool', resolve(spool), '--job'].map(shellQuote).join(' ');
  const jobs = resolve(spool, 'jobs');
  return [
    '#!/bin/bash',
    '# perfmine worker: a job array, one item per task; inputs and results live in the spool',
    `names=(${jobNames.map(shellQuote).join(' ')})`,
    'job=${names[$SLURM_ARRAY_TASK_ID]}',
    `cd ${shellQuote(jobs)}/"$job" || exit 1`,
    'exec >>slurm.out 2>&1',
    `exec ${words} "$job"`,
    '',
  ].join('\n');
}

/** Where a job array's own output goes (only what fails before a task reaches its item's directory). */
function arrayLogDir(spool: string): string {
  return join(resolve(spool), 'arrays');
}

export function arrayNameOf(stage: string): string {
  return `pm-${stage}-array-${randomBytes(6).toString('hex')}`;
}

export function jobNameOf(stage: string, key: string, inputHash: string, attempt: number): string {
  return `pm-${stage}-${sha256(`${key}\0${inputHash}`).slice(0, 12)}-${randomBytes(3).toString('hex')}-a${attempt}`;
}

/**
 * The coordinator side of the Slurm executor. Submits each item as a job (recording the job in
 * the ledger before sbatch and its id after), polls squeue then sacct, and per job decides
 * (decide.ts): ingest the result in one transaction, wait, resubmit what was lost, or fail the
 * item with a named reason. The only writer of the store; the jobs only write in the spool.
 */
export class SlurmExecutor {
  private readonly jobs: ExecutorJobs;
  private readonly live = new Map<string, Tracked>();
  private timing = { submitMs: 0, pollMs: 0, ingestMs: 0 };

  constructor(private readonly options: SlurmExecutorOptions) {
    this.jobs = new ExecutorJobs(options.db);
  }

  /** Slurm ids of the jobs this coordinator follows now. */
  liveJobIds(): string[] {
    return [...this.live.values()].map((t) => t.jobId).filter((id): id is string => id !== null);
  }

  /** On a hard stop that exits right after: cancel every job in flight and record them cancelled. */
  cancelAllSync(): void {
    const ids = this.liveJobIds();
    this.options.slurm.cancelSync(ids);
    for (const t of this.live.values()) this.jobs.settle(t.jobName, 'cancelled', 'coordinator stopped');
    if (ids.length > 0) this.options.log.warn({ jobs: ids.length }, 'cancelled the Slurm jobs in flight');
    this.live.clear();
  }

  async run(items: readonly RemoteJob[], hooks: RemoteHooks): Promise<RemoteReport> {
    const { config, log, slurm } = this.options;
    // Before anything is submitted: a spool that cannot be written is a configuration error.
    checkSpoolWritable(config.spool);
    const report = {
      submitted: 0,
      adopted: 0,
      ingested: 0,
      failed: 0,
      resubmitted: 0,
      notStarted: 0,
      cancelled: 0,
      submitMs: 0,
      submitWallMs: 0,
      pollMs: 0,
      ingestMs: 0,
      idleMs: 0,
    };
    this.timing = report;

    const prior = this.jobs.byItem(this.options.stage);
    const toSubmit: Tracked[] = [];
    const unnamed: Tracked[] = [];
    for (const job of items) {
      const action = resumeItem(prior.get(`${job.key}\0${job.inputHash}`) ?? []);
      if (action.kind === 'adopt') {
        const row = prior.get(`${job.key}\0${job.inputHash}`)!.find((r) => r.attempt === action.attempt)!;
        const t: Tracked = {
          job,
          attempt: action.attempt,
          firstCounted: action.firstCounted,
          jobName: row.jobName,
          jobId: row.jobId,
          unknownPolls: 0,
          lastState: row.slurmState,
        };
        this.live.set(t.jobName, t);
        report.adopted += 1;
        if (row.jobId === null) unnamed.push(t);
      } else {
        toSubmit.push({
          job,
          attempt: action.attempt,
          firstCounted: action.firstCounted,
          jobName: '',
          jobId: null,
          unknownPolls: 0,
          lastState: null,
        });
      }
    }
    if (unnamed.length > 0) await this.findByName(unnamed, toSubmit);
    if (report.adopted > 0)
      log.info(
        { stage: this.options.stage, adopted: report.adopted },
        'following the Slurm jobs of an earlier run instead of submitting them again',
      );

    let next = 0;
    // sbatch calls in flight at once: each costs a process and a controller round trip; items
    // submitted together go as one job array (config.arraySize tasks at most)
    const lane = async () => {
      while (next < toSubmit.length && this.live.size < config.maxJobs) {
        if (this.options.drain?.aborted || this.options.hard?.aborted) return;
        const room = Math.min(config.arraySize, config.maxJobs - this.live.size, toSubmit.length - next);
        const batch = toSubmit.slice(next, next + room);
        next += batch.length;
        try {
          if (batch.length === 1) await this.submit(batch[0]!);
          else await this.submitArray(batch);
          report.submitted += batch.length;
        } catch (error) {
          if (error instanceof ConfigError) throw error; // no sbatch at all: nothing can be submitted
          // sbatch refused or did not answer: the items fail (a rerun finds the job by name if it was queued after all)
          for (const t of batch) {
            this.live.delete(t.jobName);
            this.jobs.settle(t.jobName, 'failed', 'sbatch-failed');
            hooks.fail(t.job.key, error);
            report.failed += 1;
          }
        }
      }
    };
    const submitMore = async () => {
      const w0 = performance.now();
      const before = report.submitted;
      await Promise.all(Array.from({ length: config.submitConcurrency }, lane));
      if (report.submitted > before) report.submitWallMs += performance.now() - w0;
    };

    try {
      await submitMore();
      while (this.live.size > 0) {
        if (this.options.hard?.aborted) break;
        const p0 = performance.now();
        await this.poll(hooks, report);
        report.pollMs += performance.now() - p0;
        await submitMore();
        if (this.live.size === 0) break;
        const w0 = performance.now();
        await pause(config.pollIntervalMs, this.options.hard);
        report.idleMs += performance.now() - w0;
      }
    } finally {
      if (this.options.hard?.aborted && this.live.size > 0) {
        report.cancelled += this.live.size;
        const ids = this.liveJobIds();
        try {
          await slurm.cancel(ids);
        } catch (error) {
          log.warn({ err: (error as Error).message }, 'scancel failed');
        }
        for (const t of this.live.values()) this.jobs.settle(t.jobName, 'cancelled', 'coordinator stopped');
        this.live.clear();
      }
    }
    report.notStarted = toSubmit.length - next;
    return report;
  }

  /**
   * Attempts recorded but without a job id (a crash between sbatch and recording the id): found by
   * name (a job array's task by the array's name and its index), or submitted anew.
   */
  private async findByName(unnamed: Tracked[], toSubmit: Tracked[]): Promise<void> {
    const { spool } = this.options.config;
    const members = new Map(unnamed.map((t) => [t.jobName, readArrayMember(spool, t.jobName)]));
    const names = [...new Set(unnamed.map((t) => members.get(t.jobName)?.array ?? t.jobName))];
    const seen = new Map<string, JobState>();
    const note = (s: JobState) => {
      // a task is known by its array's name and its index; a job of its own by its name
      const task = /^\d+_(\d+)$/.exec(s.jobId);
      const key = task ? `${s.jobName}#${task[1]}` : s.jobName;
      if (!seen.has(key)) seen.set(key, s);
    };
    for (const s of await this.options.slurm.queue()) note(s);
    for (const s of await this.options.slurm.byName(names)) note(s);
    for (const t of unnamed) {
      const member = members.get(t.jobName);
      const s = seen.get(member ? `${member.array}#${member.index}` : t.jobName);
      if (s) {
        t.jobId = s.jobId;
        this.jobs.setJobId(t.jobName, s.jobId);
        continue;
      }
      // sbatch never answered for it: the attempt did not happen; a new one is submitted.
      this.jobs.settle(t.jobName, 'lost', 'never submitted');
      this.live.delete(t.jobName);
      toSubmit.push({ ...t, jobName: '', attempt: t.attempt + 1, firstCounted: t.firstCounted + 1 });
    }
  }

  /**
   * A new attempt of an item, before sbatch: its job name, its input (and, as an array's task,
   * which task) in the spool, its row in the ledger, followed from now on. Returns its job directory.
   */
  #record(t: Tracked, member?: ArrayMember): string {
    const { config, stage, runId } = this.options;
    t.jobName = jobNameOf(stage, t.job.key, t.job.inputHash, t.attempt);
    t.jobId = null;
    t.unknownPolls = 0;
    t.lastState = null;
    const dir = writeJobInput(config.spool, t.jobName, { version: 1, stage, key: t.job.key, kind: t.job.kind, payload: t.job.payload });
    if (member) writeArrayMember(config.spool, t.jobName, member);
    this.jobs.recordSubmitting({ stage, key: t.job.key, inputHash: t.job.inputHash, attempt: t.attempt, jobName: t.jobName, runId });
    this.live.set(t.jobName, t);
    return dir;
  }

  private async submit(t: Tracked): Promise<void> {
    const { config, stage } = this.options;
    const dir = this.#record(t);
    const s0 = performance.now();
    const jobId = await this.options.slurm.submit({
      jobName: t.jobName,
      script: batchScript(config.workerCommand ?? defaultWorkerCommand(), config.spool, t.jobName),
      output: join(dir, 'slurm.out'),
      chdir: dir,
      ...resources(config),
    });
    this.timing.submitMs += performance.now() - s0;
    t.jobId = jobId;
    this.jobs.setJobId(t.jobName, jobId);
    this.options.log.debug({ stage, item: t.job.key, jobId, attempt: t.attempt }, 'submitted');
  }

  /** Several items as one job array: task i is batch[i], its job id `ARRAY_i`. */
  private async submitArray(batch: Tracked[]): Promise<void> {
    const { config, stage } = this.options;
    const array = arrayNameOf(stage);
    this.options.db.transaction(() => batch.forEach((t, index) => this.#record(t, { array, index })))();
    mkdirSync(arrayLogDir(config.spool), { recursive: true });
    const s0 = performance.now();
    const arrayId = await this.options.slurm.submit({
      jobName: array,
      script: arrayScript(
        config.workerCommand ?? defaultWorkerCommand(),
        config.spool,
        batch.map((t) => t.jobName),
      ),
      // each task writes its log into its item's directory; this file holds only what fails before that
      output: join(arrayLogDir(config.spool), `${array}-%a.out`),
      chdir: resolve(config.spool),
      ...resources(config),
      arrayTasks: batch.length,
    });
    this.timing.submitMs += performance.now() - s0;
    this.options.db.transaction(() => {
      batch.forEach((t, index) => {
        t.jobId = `${arrayId}_${index}`;
        this.jobs.setJobId(t.jobName, t.jobId);
      });
    })();
    this.options.log.debug({ stage, items: batch.length, arrayId }, 'submitted a job array');
  }

  private async poll(
    hooks: RemoteHooks,
    report: { ingested: number; failed: number; resubmitted: number; submitted: number },
  ): Promise<void> {
    const { slurm, config, log, stage } = this.options;
    const states = new Map<string, JobState>();
    for (const s of await slurm.queue()) states.set(s.jobId, s);
    const missing = this.liveJobIds().filter((id) => !states.has(id));
    // squeue shows a job only while the controller holds it; sacct knows it after that.
    if (missing.length > 0) for (const s of await slurm.accounting(missing)) states.set(s.jobId, s);

    for (const t of [...this.live.values()]) {
      if (t.jobId === null) continue;
      const s = states.get(t.jobId) ?? null;
      if (s === null) t.unknownPolls += 1;
      else {
        t.unknownPolls = 0;
        if (s.state !== t.lastState) {
          t.lastState = s.state;
          this.jobs.setSlurmState(t.jobName, s.state);
        }
      }
      const read = hasResultFile(config.spool, t.jobName) ? readJobResult(config.spool, t.jobName) : { file: 'missing' as ResultFile };
      const action = decideJob(
        { attempt: attemptsUsed(t.attempt, t.firstCounted), slurmState: s?.state ?? null, result: read.file, unknownPolls: t.unknownPolls },
        config.maxAttempts,
      );
      switch (action.kind) {
        case 'wait':
          break;
        case 'ingest': {
          this.live.delete(t.jobName);
          const result = read.result!;
          if (!result.ok) {
            // the worker ran and the item failed there: its own reason, not a lost job
            this.jobs.settle(t.jobName, 'failed', result.error.reason, s?.state ?? null);
            hooks.fail(t.job.key, new ItemError(result.error.reason, `${t.job.key} (Slurm job ${t.jobId}): ${result.error.message}`));
            report.failed += 1;
            break;
          }
          const i0 = performance.now();
          try {
            this.options.db.transaction(() => {
              hooks.ingest(t.job.key, result.output);
              this.jobs.settle(t.jobName, 'ingested', null, s?.state ?? null);
            })();
            report.ingested += 1;
            this.timing.ingestMs += performance.now() - i0;
          } catch (error) {
            this.jobs.settle(t.jobName, 'failed', 'ingest failed', s?.state ?? null);
            hooks.fail(
              t.job.key,
              new ItemError(
                'slurm-result-rejected',
                `${t.job.key}: job ${t.jobId}'s result could not be recorded: ${(error as Error).message}`,
                { cause: error },
              ),
            );
            report.failed += 1;
          }
          break;
        }
        case 'resubmit': {
          log.warn(
            { stage, item: t.job.key, jobId: t.jobId, state: s?.state ?? null, attempt: t.attempt, reason: action.reason },
            'job lost; submitting the item again',
          );
          this.jobs.settle(t.jobName, 'lost', action.reason, s?.state ?? null);
          this.live.delete(t.jobName);
          t.attempt += 1;
          await this.submit(t);
          report.resubmitted += 1;
          break;
        }
        case 'fail': {
          this.jobs.settle(t.jobName, 'failed', action.reason, s?.state ?? null);
          this.live.delete(t.jobName);
          const log = join(jobDir(config.spool, t.jobName), 'slurm.out');
          hooks.fail(
            t.job.key,
            new ItemError(
              action.reason,
              `${t.job.key}: Slurm job ${t.jobId}: ${action.message}${read.problem ? ` (${read.problem})` : ''}; log: ${log}`,
            ),
          );
          report.failed += 1;
          break;
        }
      }
    }
  }
}

/** What every job asks of the cluster (config.executor.slurm). */
function resources(
  config: SlurmConfig,
): Pick<SubmitRequest, 'partition' | 'account' | 'timeLimit' | 'cpus' | 'memoryMb' | 'exclusive' | 'extraArgs'> {
  const { partition, account, timeLimit, cpus, memoryMb, exclusive, extraArgs } = config;
  return { partition, account, timeLimit, cpus, memoryMb, exclusive, extraArgs };
}

/** Waits between polls; a hard stop ends the wait at once. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolvePause) => {
    if (signal?.aborted) return resolvePause();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolvePause();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
