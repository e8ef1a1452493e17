import { runDoctor, type Check } from '../../doctor.js';
import { DockerService } from '../../services/docker.js';
import { slurmChecks } from '../../executor/doctor.js';
import { openSession, print, printJson, type GlobalFlags } from '../session.js';

const MARK: Record<Check['status'], string> = { ok: 'ok  ', missing: 'FAIL', warn: 'warn', skipped: 'skip' };

/** The closing line: counts of the lines as they are marked above (FAIL, warn, skip) among the required checks. Pure. */
export function verdict(checks: readonly Check[]): string {
  const count = (status: Check['status']) => checks.filter((c) => c.required && c.status === status).length;
  const [failing, warned, blocked] = [count('missing'), count('warn'), count('skipped')];
  if (failing + warned + blocked === 0) return 'everything the pipeline needs is in place';
  const plural = (n: number, what: string) => `${n} required check${n === 1 ? '' : 's'} ${what}`;
  const parts = [];
  if (failing > 0) parts.push(plural(failing, 'failing (FAIL)'));
  if (warned > 0) parts.push(plural(warned, 'with a warning (warn)'));
  if (blocked > 0) parts.push(plural(blocked, `not made because of ${failing + warned > 0 ? 'those' : 'what is missing'} (skip)`));
  return parts.join('; ');
}

/** Exit 0 when everything the configured pipeline needs is there, 1 otherwise. */
export async function doctorCommand(globals: GlobalFlags): Promise<number> {
  const session = openSession(globals);
  const checks = await runDoctor({
    config: session.config,
    credentials: session.credentials,
    docker: new DockerService(),
    log: session.log,
  });
  // --executor slurm: the Slurm commands, the spool from a compute node (a probe job), the registry
  if (session.config.executor.kind === 'slurm') checks.push(...(await slurmChecks(session.config)));
  const failing = checks.filter((c) => c.required && c.status !== 'ok' && c.status !== 'skipped');
  const blocked = checks.filter((c) => c.required && c.status === 'skipped');
  if (session.json) printJson({ ok: failing.length === 0 && blocked.length === 0, checks });
  else {
    for (const c of checks) {
      print(`${MARK[c.status]}  ${c.name.padEnd(22)} ${c.detail}`);
      if (c.fix && c.status !== 'ok') print(`      ${''.padEnd(22)} fix: ${c.fix}`);
    }
    print(`\n${verdict(checks)}`);
  }
  return failing.length === 0 && blocked.length === 0 ? 0 : 1;
}
