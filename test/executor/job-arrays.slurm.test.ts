import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExecutorJobs } from '../../cache/executor-jobs.js';
import { openStore } from '../../cache/store.js';
import { arrayNameOf, arrayScript, defaultWorkerCommand } from '../../pipeline/executor/slurm-executor.js';
import { writeArrayMember } from '../../pipeline/executor/spool.js';
import type { PreparedPayload } from '../../pipeline/executor/worker.js';
import { runStage } from '../../pipeline/runner.js';
import { SlurmAdapter } from '../../pipeline/services/slurm.js';
import { monthWindow } from '../../pipeline/window.js';
import { tempDir } from '../helpers/harness.js';
import {
  attemptsOf,
  preparedStage,
  recordBeforeSbatch,
  sacctJobs,
  slurmContext,
  slurmUnavailable,
  until,
} from './fixtures/prepared-stage.js';

/**
 * Job arrays on the real cluster (scripts/setup-slurm.sh): items submitted together go as one
 * `sbatch --array` whose task i runs the i-th item; each task is tracked, cancelled, resubmitted
 * and ingested as a job of its own (`ARRAY_i`), and after a crash between sbatch and recording the
 * ids the coordinator finds the array by its name instead of submitting the items again.
 */
const unavailable = slurmUnavailable();
if (unavailable) console.warn(`[slurm job-array tests skipped] ${unavailable}`);

const scope = { window: monthWindow('2025-04'), repos: [], prs: [], source: { kind: 'github' as const } };
const since = execFileSync('date', ['+%Y-%m-%dT%H:%M:%S'], { encoding: 'utf8' }).trim();
const slurm = new SlurmAdapter();

describe.skipIf(unavailable !== null)('job arrays on a real cluster', () => {
  it('runs 12 items as arrays of at most 5 tasks; a task cancelled with scancel is resubmitted alone and done once', async () => {
    const dir = tempDir('perfmine-slurm-arrays-');
    const spool = join(dir, 'spool');
    const release = join(dir, 'release');
    const db = openStore(join(dir, 'perfmine.db'));
    const items = Array.from({ length: 12 }, (_, i) => ({
      key: `item-${i}`,
      payload: (i === 6 ? { output: { n: i }, waitForFile: release } : { output: { n: i } }) satisfies PreparedPayload,
    }));
    const running = runStage(slurmContext(db, spool, { arraySize: 5, maxJobs: 20 }), preparedStage(items), scope);
    const held = items[6]!;
    const first = await until('item-6 to run', async () => {
      const row = attemptsOf(db, held.key, held.payload)[0];
      if (!row?.jobId) return false;
      return (await slurm.queue()).some((j) => j.jobId === row.jobId && j.state === 'RUNNING') ? row.jobId : false;
    });
    expect(first).toMatch(/^\d+_1$/); // the second task of the second array
    execFileSync('scancel', [first]);
    await until('item-6 to be submitted again', () => attemptsOf(db, held.key, held.payload).length === 2);
    writeFileSync(release, 'go');
    const report = await running;

    expect(report.done).toBe(12);
    const rows = items.map((i) => attemptsOf(db, i.key, i.payload));
    // three arrays (5, 5 and 2 tasks), item i the task i mod 5 of array i / 5
    const arrays = rows.map((r) => r[0]!.jobId!.split('_')[0]);
    expect(new Set(arrays).size).toBe(3);
    rows.forEach((r, i) => expect(r[0]!.jobId).toBe(`${arrays[i - (i % 5)]}_${i % 5}`));
    for (const [i, r] of rows.entries()) {
      if (i === 6) continue;
      expect(r.map((a) => a.state)).toEqual(['ingested']);
    }
    expect(rows[6]!.map((a) => [a.attempt, a.state, a.reason])).toEqual([
      [1, 'lost', 'slurm-cancelled'],
      [2, 'ingested', null],
    ]);
    // the resubmission is a job of its own
    expect(rows[6]![1]!.jobId).toMatch(/^\d+$/);
    // every task wrote its log in its item's directory
    for (const r of rows) expect(existsSync(join(spool, 'jobs', r[0]!.jobName, 'slurm.out'))).toBe(true);
    expect(new ExecutorJobs(db).open()).toEqual([]);
    db.close();
  }, 600_000);

  it('after a crash between sbatch and recording the ids, finds the array by its name and submits nothing again', async () => {
    const dir = tempDir('perfmine-slurm-arrays-');
    const spool = join(dir, 'spool');
    mkdirSync(spool);
    const db = openStore(join(dir, 'perfmine.db'));
    const items = [0, 1, 2].map((n) => ({ key: `orphan-${n}`, payload: { output: { n } } satisfies PreparedPayload }));
    // what the coordinator does before its crash: record the attempts, write the inputs, sbatch the array
    const array = arrayNameOf('synthesize');
    const names = items.map((item, index) => {
      const { jobName } = recordBeforeSbatch(db, spool, item.key, item.payload);
      writeArrayMember(spool, jobName, { array, index });
      return jobName;
    });
    mkdirSync(join(spool, 'arrays'));
    const arrayId = await slurm.submit({
      jobName: array,
      script: arrayScript(defaultWorkerCommand(), spool, names),
      output: join(spool, 'arrays', `${array}-%a.out`),
      chdir: spool,
      timeLimit: '1',
      cpus: 1,
      exclusive: false,
      extraArgs: [],
      arrayTasks: 3,
    });

    const report = await runStage(slurmContext(db, spool, { arraySize: 5 }), preparedStage(items), scope);
    expect(report.done).toBe(3);
    items.forEach((item, i) =>
      expect(attemptsOf(db, item.key, item.payload).map((r) => [r.attempt, r.state, r.jobId])).toEqual([
        [1, 'ingested', `${arrayId}_${i}`],
      ]),
    );
    // sacct: that array's three tasks, and no other job of these items
    const accounted = await until('sacct to list the tasks', () => {
      const found = sacctJobs(array, since);
      return found.length >= 3 ? found : false;
    });
    expect(accounted.map((j) => j.jobId).sort()).toEqual([0, 1, 2].map((i) => `${arrayId}_${i}`));
    for (const name of names) expect(sacctJobs(name.replace(/-[0-9a-f]{6}-a1$/, ''), since)).toEqual([]);
    db.close();
  }, 300_000);
});
