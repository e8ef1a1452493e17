import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutorJobs } from '../../cache/executor-jobs.js';
import { openStore, type Db } from '../../cache/store.js';
import { runStage, type StageReport } from '../../pipeline/runner.js';
import { monthWindow } from '../../pipeline/window.js';
import { SlurmAdapter } from '../../pipeline/services/slurm.js';
import { batchScript, defaultWorkerCommand } from '../../pipeline/executor/slurm-executor.js';
import { tempDir } from '../helpers/harness.js';
import {
  attemptsOf,
  preparedStage,
  recordBeforeSbatch,
  sacctJobs,
  slurmContext as context,
  slurmUnavailable,
  until,
} from './fixtures/prepared-stage.js';
import type { PreparedPayload } from '../../pipeline/executor/worker.js';

/**
 * The Slurm executor against a real cluster (scripts/setup-slurm.sh starts one on this host):
 * real sbatch, squeue, sacct and scancel; real jobs running `perfmine worker` on the nodes.
 * The items are prepared results, so that every fault is the cluster's, not a build's.
 */
const unavailable = slurmUnavailable();
if (unavailable) console.warn(`[slurm tests skipped] ${unavailable}`);

const scope = { window: monthWindow('2025-04'), repos: [], prs: [], source: { kind: 'github' as const } };
const slurm = new SlurmAdapter();
const since = execFileSync('date', ['+%Y-%m-%dT%H:%M:%S'], { encoding: 'utf8' }).trim();

describe.skipIf(unavailable !== null)('the Slurm executor on a real cluster', () => {
  describe('one stage run with a job cancelled, one killed by its time limit, and unusable results', () => {
    const dir = tempDir('perfmine-slurm-');
    const spool = join(dir, 'spool');
    const release = join(dir, 'release-cancelled');
    const items = {
      quick: { output: { n: 1 } },
      cancelled: { output: { n: 2 }, waitForFile: release },
      timeLimit: { output: { n: 3 }, waitForFile: join(dir, 'never') },
      truncated: { output: { n: 4 }, rawResult: '{"version":1,"jobName":"pm-' },
      missing: { output: { n: 5 }, exitCode: 0 },
      crashed: { output: { n: 6 }, exitCode: 3 },
    } satisfies Record<string, PreparedPayload>;
    let db: Db;
    let report: StageReport;
    let cancelledJob: string;

    beforeAll(async () => {
      db = openStore(join(dir, 'perfmine.db'));
      const ctx = context(db, spool);
      const running = runStage(ctx, preparedStage(Object.entries(items).map(([key, payload]) => ({ key, payload }))), scope);
      // scancel the `cancelled` item's job once it runs; release its next attempt once the coordinator resubmitted it
      const first = await until('the first job of `cancelled` to run', async () => {
        const row = attemptsOf(db, 'cancelled', items.cancelled)[0];
        if (!row?.jobId) return false;
        const q = await slurm.queue();
        return q.find((j) => j.jobId === row.jobId && j.state === 'RUNNING') ? row.jobId : false;
      });
      cancelledJob = first;
      execFileSync('scancel', [first]);
      await until('the coordinator to submit `cancelled` again', () => attemptsOf(db, 'cancelled', items.cancelled).length === 2);
      writeFileSync(release, 'go');
      report = await running;
    }, 600_000);

    afterAll(() => db?.close());

    it('finishes the quick item once, with its result', () => {
      expect(ctx(db).ledger.get('synthesize', 'quick')).toMatchObject({ status: 'done', output: { n: 1 } });
      expect(attemptsOf(db, 'quick', items.quick).map((r) => r.state)).toEqual(['ingested']);
      expect(report.done).toBe(2);
    });

    it('resubmits a job cancelled with scancel, and the item is done once', async () => {
      expect(ctx(db).ledger.get('synthesize', 'cancelled')).toMatchObject({ status: 'done', output: { n: 2 } });
      const rows = attemptsOf(db, 'cancelled', items.cancelled);
      expect(rows.map((r) => [r.attempt, r.state, r.reason])).toEqual([
        [1, 'lost', 'slurm-cancelled'],
        [2, 'ingested', null],
      ]);
      expect(rows[0]!.jobId).toBe(cancelledJob);
      // sacct: exactly the two jobs the ledger names, the first cancelled
      const prefix = rows[0]!.jobName.replace(/-[0-9a-f]{6}-a1$/, '');
      const accounted = await until('sacct to list both jobs', () => {
        const found = sacctJobs(prefix, since);
        return found.length >= rows.length && found.every((j) => j.state !== 'RUNNING' && j.state !== 'PENDING') ? found : false;
      });
      expect(accounted.map((j) => j.jobId).sort()).toEqual(rows.map((r) => r.jobId).sort());
      expect(accounted.find((j) => j.jobId === cancelledJob)?.state).toBe('CANCELLED');
    });

    it('records a job killed by its time limit, retries it, then fails the item by name', () => {
      const rows = attemptsOf(db, 'timeLimit', items.timeLimit);
      expect(rows.map((r) => [r.attempt, r.state, r.slurmState, r.reason])).toEqual([
        [1, 'lost', 'TIMEOUT', 'slurm-time-limit'],
        [2, 'failed', 'TIMEOUT', 'slurm-time-limit'],
      ]);
      expect(ctx(db).ledger.get('synthesize', 'timeLimit')).toMatchObject({ status: 'failed', reason: 'slurm-time-limit' });
      expect(report.failed['slurm-time-limit']).toBe(1);
    });

    it('fails an item whose result file is truncated, or missing, by name and without resubmitting', () => {
      expect(ctx(db).ledger.get('synthesize', 'truncated')).toMatchObject({ status: 'failed', reason: 'slurm-result-unreadable' });
      expect(ctx(db).ledger.get('synthesize', 'missing')).toMatchObject({ status: 'failed', reason: 'slurm-result-missing' });
      expect(ctx(db).ledger.get('synthesize', 'crashed')).toMatchObject({ status: 'failed', reason: 'slurm-job-failed' });
      expect(ctx(db).ledger.get('synthesize', 'crashed')?.lastError).toContain('slurm.out');
      for (const key of ['truncated', 'missing', 'crashed'] as const) expect(attemptsOf(db, key, items[key])).toHaveLength(1);
      expect(new ExecutorJobs(db).open()).toEqual([]);
    });
  });

  it('refuses a spool it cannot write, before anything is submitted', async () => {
    const dir = tempDir('perfmine-slurm-');
    writeFileSync(join(dir, 'a-file'), '');
    const db = openStore(':memory:');
    const ctx = context(db, join(dir, 'a-file', 'spool'));
    await expect(runStage(ctx, preparedStage([{ key: 'x', payload: { output: { n: 1 } } }]), scope)).rejects.toMatchObject({
      kind: 'config',
      reason: 'spool-not-writable',
      message: expect.stringContaining('nothing was submitted'),
    });
    expect(new ExecutorJobs(db).open()).toEqual([]);
    expect(db.prepare('SELECT COUNT(*) AS n FROM executor_jobs').get()).toEqual({ n: 0 });
  });

  it('after the coordinator is SIGKILLed while its jobs run, a rerun ingests them and submits nothing twice', async () => {
    const dir = tempDir('perfmine-slurm-');
    const spool = join(dir, 'spool');
    const release = join(dir, 'release');
    const dbPath = join(dir, 'perfmine.db');
    openStore(dbPath).close();
    const list = [1, 2, 3].map((n) => ({ key: `killed-${n}`, payload: { output: { n }, waitForFile: release } }));
    writeFileSync(join(dir, 'items.json'), JSON.stringify(list));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'coordinator.ts'), dbPath, join(dir, 'items.json'), spool],
      { stdio: 'ignore' },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    const db = openStore(dbPath);
    try {
      await until('all three jobs to be submitted', () => list.every((i) => attemptsOf(db, i.key, i.payload)[0]?.jobId));
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      const submitted = list.map((i) => attemptsOf(db, i.key, i.payload)[0]!.jobId!);
      writeFileSync(release, 'go');

      const report = await runStage(context(db, spool), preparedStage(list), scope);
      expect(report.done).toBe(3);
      for (const i of list) {
        expect(context(db, spool).ledger.get('synthesize', i.key)).toMatchObject({ status: 'done', output: i.payload.output });
        expect(attemptsOf(db, i.key, i.payload).map((r) => [r.attempt, r.state])).toEqual([[1, 'ingested']]);
      }
      // sacct: one job per item, the ones the killed coordinator submitted
      // (slurmctld hands its job records to slurmdbd asynchronously: wait until sacct lists as many as were submitted)
      const accounted = () =>
        list.flatMap((i) => sacctJobs(attemptsOf(db, i.key, i.payload)[0]!.jobName.replace(/-[0-9a-f]{6}-a1$/, ''), since));
      const jobs = await until('sacct to list the submitted jobs', () => {
        const found = accounted();
        return found.length >= submitted.length ? found : false;
      });
      expect(jobs.map((j) => j.jobId).sort()).toEqual([...submitted].sort());
    } finally {
      db.close();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 600_000);

  it('on a hard stop (second Ctrl-C) cancels its jobs and records them cancelled; a rerun submits them afresh', async () => {
    const dir = tempDir('perfmine-slurm-');
    const spool = join(dir, 'spool');
    const db = openStore(join(dir, 'perfmine.db'));
    const list = [1, 2].map((n) => ({ key: `stopped-${n}`, payload: { output: { n }, waitForFile: join(dir, 'never') } }));
    const hard = new AbortController();
    const running = runStage(context(db, spool, {}, hard.signal), preparedStage(list), scope);
    const ids = await until('both jobs to be submitted', () => {
      const rows = list.map((i) => attemptsOf(db, i.key, i.payload)[0]?.jobId);
      return rows.every(Boolean) ? (rows as string[]) : false;
    });
    hard.abort();
    const report = await running;
    expect(report.notStarted).toBe(2);
    for (const i of list)
      expect(attemptsOf(db, i.key, i.payload).map((r) => [r.attempt, r.state, r.reason])).toEqual([
        [1, 'cancelled', 'coordinator stopped'],
      ]);
    const states = await until('sacct to show both jobs cancelled', async () => {
      const s = await slurm.accounting(ids);
      return s.length === 2 && s.every((j) => j.state === 'CANCELLED') ? s : false;
    });
    expect(states.map((j) => j.jobId).sort()).toEqual([...ids].sort());
    expect(new ExecutorJobs(db).open()).toEqual([]);

    writeFileSync(join(dir, 'never'), 'go');
    const rerun = await runStage(context(db, spool), preparedStage(list), scope);
    expect(rerun.done).toBe(2);
    for (const i of list)
      expect(attemptsOf(db, i.key, i.payload).map((r) => [r.attempt, r.state])).toEqual([
        [1, 'cancelled'],
        [2, 'ingested'],
      ]);
    db.close();
  }, 300_000);

  it('finds a job submitted just before a crash (its id never recorded) by its name, instead of submitting it again', async () => {
    const dir = tempDir('perfmine-slurm-');
    const spool = join(dir, 'spool');
    mkdirSync(spool);
    const db = openStore(join(dir, 'perfmine.db'));
    const payload: PreparedPayload = { output: { n: 7 } };
    // what the coordinator does before its crash: record the attempt, write the input, sbatch
    const { jobName, jobDir: jobDirPath } = recordBeforeSbatch(db, spool, 'orphan', payload);
    const jobId = await slurm.submit({
      jobName,
      script: batchScript(defaultWorkerCommand(), spool, jobName),
      output: join(jobDirPath, 'slurm.out'),
      chdir: jobDirPath,
      timeLimit: '1',
      cpus: 1,
      exclusive: false,
      extraArgs: [],
    });

    const report = await runStage(context(db, spool), preparedStage([{ key: 'orphan', payload }]), scope);
    expect(report.done).toBe(1);
    expect(attemptsOf(db, 'orphan', payload).map((r) => [r.attempt, r.state, r.jobId])).toEqual([[1, 'ingested', jobId]]);
    // (sacct lists a job once slurmctld has handed its record to slurmdbd, asynchronously)
    const accounted = await until('sacct to list the job', () => {
      const found = sacctJobs(jobName.replace(/-[0-9a-f]{6}-a1$/, ''), since);
      return found.length > 0 ? found : false;
    });
    expect(accounted.map((j) => j.jobId)).toEqual([jobId]);
    expect(existsSync(join(spool, 'jobs', jobName, 'result.json'))).toBe(true);
    expect(readdirSync(join(spool, 'jobs'))).toEqual([jobName]);
    db.close();
  }, 300_000);
});

function ctx(db: Db) {
  return context(db, '/nonexistent');
}
