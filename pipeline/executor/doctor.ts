import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Check } from '../doctor.js';
import type { Config } from '../config/schema.js';
import { SlurmAdapter } from '../services/slurm.js';
import { checkSpoolWritable, jobDir } from './spool.js';

/** `perfmine doctor --executor slurm`: the Slurm commands, the spool (here and from a compute node), and the registry. */
export async function slurmChecks(config: Config, slurm = new SlurmAdapter()): Promise<Check[]> {
  const s = config.executor.slurm;
  const checks: Check[] = [];
  let commands = true;
  for (const command of ['sbatch', 'squeue', 'sacct', 'scancel'] as const) {
    try {
      checks.push({ name: command, status: 'ok', detail: await slurm.version(command), required: true });
    } catch (error) {
      commands = false;
      checks.push({
        name: command,
        status: 'missing',
        detail: (error as Error).message.split('\n')[0]!,
        fix: 'install the Slurm client commands and their config (slurm.conf, munge), or run scripts/setup-slurm.sh to try a local cluster',
        required: true,
      });
    }
  }
  let spoolOk = true;
  try {
    checkSpoolWritable(s.spool);
    checks.push({ name: 'spool (here)', status: 'ok', detail: `${s.spool} is writable`, required: true });
  } catch (error) {
    spoolOk = false;
    checks.push({
      name: 'spool (here)',
      status: 'missing',
      detail: (error as Error).message,
      fix: 'make executor.slurm.spool a writable directory on a filesystem the compute nodes share',
      required: true,
    });
  }
  if (!commands || !spoolOk)
    checks.push({ name: 'spool (compute node)', status: 'skipped', detail: 'no Slurm commands or no spool', required: true });
  else checks.push(await probeJob(config, slurm));
  checks.push(await checkRegistry(config.executor.registry));
  return checks;
}

/** A probe job writes into the spool from a compute node (sbatch --wait): the spool is shared and writable there. */
async function probeJob(config: Config, slurm: SlurmAdapter): Promise<Check> {
  const s = config.executor.slurm;
  const name = `pm-doctor-${process.pid}`;
  const dir = jobDir(s.spool, name);
  const file = join(dir, 'probe');
  try {
    checkSpoolWritable(s.spool);
    const jobId = await slurm.submit({
      jobName: name,
      script: `#!/bin/bash\nmkdir -p '${dir}' && hostname > '${file}.tmp' && mv '${file}.tmp' '${file}'\n`,
      output: '/dev/null',
      partition: s.partition,
      account: s.account,
      timeLimit: '5',
      cpus: 1,
      exclusive: false,
      extraArgs: [...s.extraArgs, '--wait'],
    });
    const ok = existsSync(file);
    const host = ok ? readFileSync(file, 'utf8').trim() : '';
    rmSync(dir, { recursive: true, force: true });
    return ok
      ? { name: 'spool (compute node)', status: 'ok', detail: `probe job ${jobId} wrote into the spool from ${host}`, required: true }
      : {
          name: 'spool (compute node)',
          status: 'missing',
          detail: `probe job ${jobId} ended without writing ${file}`,
          fix: 'put the spool on a filesystem every compute node mounts at the same path, writable by you there',
          required: true,
        };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return {
      name: 'spool (compute node)',
      status: 'missing',
      detail: `the probe job failed: ${(error as Error).message.split('\n')[0]}`,
      required: true,
    };
  }
}

/** Docker's distribution registry answers `GET /v2/` (200, or 401 when it wants credentials). */
async function checkRegistry(registry: string | undefined): Promise<Check> {
  if (!registry) {
    return {
      name: 'registry',
      status: 'warn',
      detail: 'executor.registry is not set: each node rebuilds images from the cached build scripts',
      fix: 'run a Docker distribution registry (Debian: docker-registry) and set executor.registry to host:port',
      required: false,
    };
  }
  const url = `${/^https?:\/\//.test(registry) ? registry : `http://${registry}`}/v2/`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (response.status === 200 || response.status === 401)
      return { name: 'registry', status: 'ok', detail: `${url} answers (${response.status})`, required: true };
    return { name: 'registry', status: 'missing', detail: `${url} answered ${response.status}`, required: true };
  } catch (error) {
    return {
      name: 'registry',
      status: 'missing',
      detail: `${url}: ${(error as Error).message}`,
      fix: 'start the registry (Debian: docker-registry) or correct executor.registry',
      required: true,
    };
  }
}
