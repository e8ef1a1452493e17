import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attemptsUsed, decideJob, resumeItem, UNKNOWN_POLLS_BEFORE_LOST, type JobView } from '../../pipeline/executor/decide.js';
import { arrayScript, batchScript } from '../../pipeline/executor/slurm-executor.js';
import { tempDir } from '../helpers/harness.js';
import { parseSbatch, parseStates, sbatchArgs } from '../../pipeline/services/slurm.js';

const view = (v: Partial<JobView>): JobView => ({ attempt: 1, slurmState: 'RUNNING', result: 'missing', unknownPolls: 0, ...v });

describe('decideJob', () => {
  it('ingests a whole result whatever Slurm says, and waits on a running job without one', () => {
    expect(decideJob(view({ result: 'ok', slurmState: 'RUNNING' }), 3)).toEqual({ kind: 'ingest' });
    expect(decideJob(view({ result: 'ok', slurmState: 'TIMEOUT' }), 3)).toEqual({ kind: 'ingest' });
    expect(decideJob(view({ result: 'ok', slurmState: null, unknownPolls: 9 }), 3)).toEqual({ kind: 'ingest' });
    for (const s of ['PENDING', 'RUNNING', 'COMPLETING', 'CONFIGURING', 'SUSPENDED'])
      expect(decideJob(view({ slurmState: s }), 3)).toEqual({ kind: 'wait' });
    // a result half-written by a worker that is still running is not judged yet
    expect(decideJob(view({ slurmState: 'RUNNING', result: 'unreadable' }), 3)).toEqual({ kind: 'wait' });
  });

  it('resubmits a job lost to the time limit, a node failure, preemption or a cancel, then fails it by name', () => {
    const cases: [string, string][] = [
      ['TIMEOUT', 'slurm-time-limit'],
      ['NODE_FAIL', 'slurm-node-failure'],
      ['PREEMPTED', 'slurm-preempted'],
      ['CANCELLED', 'slurm-cancelled'],
      ['BOOT_FAIL', 'slurm-node-failure'],
      ['OUT_OF_MEMORY', 'slurm-out-of-memory'],
    ];
    for (const [state, reason] of cases) {
      expect(decideJob(view({ slurmState: state, attempt: 1 }), 2)).toEqual({ kind: 'resubmit', reason });
      const last = decideJob(view({ slurmState: state, attempt: 2 }), 2);
      expect(last).toMatchObject({ kind: 'fail', reason });
      expect(last.kind === 'fail' && last.message).toContain('2 of 2 attempt(s)');
    }
    expect(decideJob(view({ slurmState: 'TIMEOUT', attempt: 1 }), 1)).toMatchObject({ kind: 'fail', reason: 'slurm-time-limit' });
  });

  it('fails an item whose job ended without a usable result, without resubmitting it', () => {
    expect(decideJob(view({ slurmState: 'COMPLETED', result: 'missing' }), 3)).toMatchObject({
      kind: 'fail',
      reason: 'slurm-result-missing',
    });
    expect(decideJob(view({ slurmState: 'COMPLETED', result: 'unreadable' }), 3)).toMatchObject({
      kind: 'fail',
      reason: 'slurm-result-unreadable',
    });
    expect(decideJob(view({ slurmState: 'FAILED', result: 'unreadable' }), 3)).toMatchObject({
      kind: 'fail',
      reason: 'slurm-result-unreadable',
    });
    expect(decideJob(view({ slurmState: 'FAILED', result: 'missing' }), 3)).toMatchObject({ kind: 'fail', reason: 'slurm-job-failed' });
  });

  it('gives a job Slurm does not know a few polls, then counts it lost', () => {
    for (let n = 0; n < UNKNOWN_POLLS_BEFORE_LOST; n++)
      expect(decideJob(view({ slurmState: null, unknownPolls: n }), 3)).toEqual({ kind: 'wait' });
    expect(decideJob(view({ slurmState: null, unknownPolls: UNKNOWN_POLLS_BEFORE_LOST }), 3)).toEqual({
      kind: 'resubmit',
      reason: 'slurm-job-vanished',
    });
    expect(decideJob(view({ slurmState: null, unknownPolls: UNKNOWN_POLLS_BEFORE_LOST, attempt: 3 }), 3)).toMatchObject({
      kind: 'fail',
      reason: 'slurm-job-vanished',
    });
  });
});

describe('resumeItem', () => {
  it('submits attempt 1 for a new item and adopts an open attempt instead of submitting again', () => {
    expect(resumeItem([])).toEqual({ kind: 'submit', attempt: 1, firstCounted: 1 });
    expect(resumeItem([{ attempt: 1, state: 'submitted' }])).toEqual({ kind: 'adopt', attempt: 1, firstCounted: 1 });
    expect(resumeItem([{ attempt: 1, state: 'submitting' }])).toEqual({ kind: 'adopt', attempt: 1, firstCounted: 1 });
  });

  it('counts attempts lost before a crash, and not those of an earlier finished or stopped run', () => {
    const r = resumeItem([
      { attempt: 1, state: 'failed' },
      { attempt: 2, state: 'lost' },
      { attempt: 3, state: 'submitted' },
    ]);
    expect(r).toEqual({ kind: 'adopt', attempt: 3, firstCounted: 2 });
    expect(attemptsUsed(r.attempt, r.firstCounted)).toBe(2);
    expect(
      resumeItem([
        { attempt: 1, state: 'cancelled' },
        { attempt: 2, state: 'lost' },
      ]),
    ).toEqual({ kind: 'submit', attempt: 3, firstCounted: 2 });
    expect(resumeItem([{ attempt: 1, state: 'ingested' }])).toEqual({ kind: 'submit', attempt: 2, firstCounted: 2 });
  });
});

describe('the Slurm adapter (pure parts)', () => {
  it('builds the sbatch arguments from the configuration', () => {
    const args = sbatchArgs({
      jobName: 'pm-x-a1',
      script: '',
      output: '/s/out',
      chdir: '/s',
      partition: 'bench',
      account: 'lab',
      timeLimit: '02:00:00',
      cpus: 4,
      memoryMb: 8000,
      exclusive: true,
      extraArgs: ['--qos=long'],
    });
    expect(args).toEqual([
      '--parsable',
      '--job-name=pm-x-a1',
      '--output=/s/out',
      '--time=02:00:00',
      '--cpus-per-task=4',
      '--ntasks=1',
      '--nodes=1',
      '--chdir=/s',
      '--partition=bench',
      '--account=lab',
      '--mem=8000',
      '--exclusive',
      '--no-requeue',
      '--qos=long',
    ]);
    expect(sbatchArgs({ jobName: 'n', script: '', output: 'o', timeLimit: '10', cpus: 1, exclusive: false, extraArgs: [] })).not.toContain(
      '--exclusive',
    );
  });

  it('parses sbatch, squeue and sacct answers', () => {
    expect(parseSbatch('1234\n')).toBe('1234');
    expect(parseSbatch('1234;perfmine\n')).toBe('1234');
    expect(() => parseSbatch('sbatch: error: Batch job submission failed\n')).toThrow();
    expect(parseStates('12|pm-a|RUNNING|\n13|pm-b|PENDING|\n')).toEqual([
      { jobId: '12', jobName: 'pm-a', state: 'RUNNING', exitCode: null },
      { jobId: '13', jobName: 'pm-b', state: 'PENDING', exitCode: null },
    ]);
    expect(parseStates('12|pm-a|CANCELLED by 0|0:15\n12.batch|batch|CANCELLED|0:15\n14|pm-c|TIMEOUT|0:0\n')).toEqual([
      { jobId: '12', jobName: 'pm-a', state: 'CANCELLED', exitCode: '0:15' },
      { jobId: '14', jobName: 'pm-c', state: 'TIMEOUT', exitCode: '0:0' },
    ]);
  });

  it('writes a batch script that execs the worker with the spool and job quoted', () => {
    const script = batchScript(['/usr/bin/node', '/opt/perf mine/bin.js', 'worker'], '/spool', 'pm-j-a1');
    expect(script.split('\n')[0]).toBe('#!/bin/bash');
    expect(script).toContain("exec /usr/bin/node '/opt/perf mine/bin.js' worker --spool /spool --job pm-j-a1");
  });

  it('asks sbatch for a job array of N tasks, and parses its tasks as squeue --array lists them', () => {
    const base = { jobName: 'pm-x-array-1', script: '', output: 'o', timeLimit: '10', cpus: 1, exclusive: false, extraArgs: [] };
    expect(sbatchArgs({ ...base, arrayTasks: 5 })).toContain('--array=0-4');
    expect(sbatchArgs({ ...base, arrayTasks: 1 }).some((a) => a.startsWith('--array'))).toBe(false);
    expect(parseStates('77_0|pm-x-array-1|RUNNING|\n77_1|pm-x-array-1|PENDING|\n77_0.batch|batch|RUNNING|\n')).toEqual([
      { jobId: '77_0', jobName: 'pm-x-array-1', state: 'RUNNING', exitCode: null },
      { jobId: '77_1', jobName: 'pm-x-array-1', state: 'PENDING', exitCode: null },
    ]);
  });

  it("writes a job array's script: task i execs the worker for the i-th job, its log in that job's directory", () => {
    const spool = tempDir('perfmine-array-script-');
    mkdirSync(join(spool, 'jobs', 'pm-b-a1'), { recursive: true });
    const script = arrayScript(['/bin/echo', 'ran'], spool, ['pm-a-a1', 'pm-b-a1']);
    const ran = spawnSync('bash', ['-c', script], { env: { SLURM_ARRAY_TASK_ID: '1', PATH: process.env.PATH }, encoding: 'utf8' });
    expect(ran.status).toBe(0);
    expect(readFileSync(join(spool, 'jobs', 'pm-b-a1', 'slurm.out'), 'utf8')).toBe(`ran --spool ${spool} --job pm-b-a1\n`);
    expect(arrayScript(['/usr/bin/node', '/opt/perf mine/bin.js', 'worker'], '/spool', ['pm-a-a1'])).toContain(
      'exec /usr/bin/node \'/opt/perf mine/bin.js\' worker --spool /spool --job "$job"',
    );
  });
});
