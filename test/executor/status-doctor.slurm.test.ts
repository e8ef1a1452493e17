import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutorJobs } from '../../cache/executor-jobs.js';
import { openStore } from '../../cache/store.js';
import { slurmChecks } from '../../pipeline/executor/doctor.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/harness.js';
import { slurmConfig, slurmUnavailable } from './fixtures/prepared-stage.js';

const unavailable = slurmUnavailable();
if (unavailable) console.warn(`[slurm tests skipped] ${unavailable}`);

describe('perfmine status: Slurm jobs in flight', () => {
  it('lists open jobs per stage with their Slurm state and ids, in text and JSON', async () => {
    const dir = tempDir('perfmine-slurm-status-');
    const dbPath = join(dir, 'perfmine.db');
    const db = openStore(dbPath);
    const jobs = new ExecutorJobs(db);
    const add = (stage: string, key: string, name: string, id: string | null, state: string | null) => {
      jobs.recordSubmitting({ stage, key, inputHash: 'h', attempt: 1, jobName: name, runId: null });
      if (id !== null) jobs.setJobId(name, id);
      if (state !== null) jobs.setSlurmState(name, state);
    };
    add('synthesize', 'o/r@1', 'n1', '101', 'RUNNING');
    add('synthesize', 'o/r@2', 'n2', '102', 'PENDING');
    add('synthesize', 'o/r@3', 'n3', '103', 'RUNNING');
    add('validate', 'o/r#4', 'n4', null, null);
    add('validate', 'o/r#5', 'n5', '105', 'COMPLETED');
    jobs.settle('n5', 'ingested', null);
    db.close();

    const text = await runCli(['status', '--db', dbPath]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Slurm jobs in flight (executor: slurm):');
    expect(text.stdout).toContain('  synthesize running: 101 103');
    expect(text.stdout).toContain('  synthesize pending: 102');
    expect(text.stdout).toContain('  validate submitting: being submitted');
    expect(text.stdout).not.toContain('105');
    const json = JSON.parse((await runCli(['status', '--db', dbPath, '--json'])).stdout) as { slurmJobs: unknown[] };
    expect(json.slurmJobs).toEqual([
      { stage: 'synthesize', slurmState: 'PENDING', jobIds: ['102'] },
      { stage: 'synthesize', slurmState: 'RUNNING', jobIds: ['101', '103'] },
      { stage: 'validate', slurmState: 'SUBMITTING', jobIds: [] },
    ]);
  });
});

describe.skipIf(unavailable !== null)('perfmine doctor --executor slurm on a real cluster', () => {
  let registry: Server;
  let port = 0;
  beforeAll(async () => {
    // a loopback stand-in answering the distribution registry's version check
    registry = createServer((req, res) => {
      res.writeHead(req.url === '/v2/' ? 200 : 404, {
        'content-type': 'application/json',
        'docker-distribution-api-version': 'registry/2.0',
      });
      res.end('{}');
    });
    await new Promise<void>((r) => registry.listen(0, '127.0.0.1', r));
    port = (registry.address() as { port: number }).port;
  });
  afterAll(() => registry?.close());

  it('checks the Slurm commands, the spool from a compute node with a probe job, and the registry', async () => {
    const spool = join(tempDir('perfmine-slurm-doctor-'), 'spool');
    const config = slurmConfig(spool);
    const checks = await slurmChecks({ ...config, executor: { ...config.executor, registry: `127.0.0.1:${port}` } });
    const by = Object.fromEntries(checks.map((c) => [c.name, c]));
    for (const name of ['sbatch', 'squeue', 'sacct', 'scancel'])
      expect(by[name]).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^slurm(-wlm)? \d/) });
    expect(by['spool (here)']?.status).toBe('ok');
    expect(by['spool (compute node)']).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^probe job \d+ wrote into the spool from /),
    });
    expect(by['registry']).toMatchObject({ status: 'ok', detail: `http://127.0.0.1:${port}/v2/ answers (200)` });
  }, 300_000);

  it('says what is wrong with an unwritable spool and no registry, and probes nothing', async () => {
    const dir = tempDir('perfmine-slurm-doctor-');
    writeFileSync(join(dir, 'file'), '');
    const checks = await slurmChecks(slurmConfig(join(dir, 'file', 'spool')));
    const by = Object.fromEntries(checks.map((c) => [c.name, c]));
    expect(by['spool (here)']).toMatchObject({ status: 'missing', detail: expect.stringContaining('is not writable') });
    expect(by['spool (compute node)']?.status).toBe('skipped');
    expect(by['registry']).toMatchObject({ status: 'warn', required: false });
  });
});
