import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packagePath } from '../../pipeline/package-root.js';

/**
 * A side's account from outside its processes (perfmine_bench_account.py), as the verifier keeps it
 * as root: every process of the side's uid counted, the ones that escape their parent by a double
 * fork and a new session included (re-parented to the verifier, the subreaper, and charged to
 * their uid when reaped), and all of them stopped at once. Needs root (CI runs as root).
 */
const DIR = packagePath('python');
const root = process.getuid?.() === 0;
const dir = mkdtempSync(join(tmpdir(), 'account-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function python(body: string): Record<string, unknown> {
  const code = `
import json, os, subprocess, sys, time
sys.path.insert(0, ${JSON.stringify(DIR)})
import perfmine_bench_account as a
UID = a.pids and 61900
while any(UID in (a.read_uids(p) or ()) for p in a.pids()):
    UID += 1
reaper = a.Reaper()
acct = a.UidAccount(UID, UID, reaper)
def as_side():
    os.setgroups([]); os.setresgid(UID, UID, UID); os.setresuid(UID, UID, UID); a.no_new_privs()
${body}
`;
  return JSON.parse(execFileSync('python3', ['-c', code], { encoding: 'utf8', cwd: dir, timeout: 120_000 }).trim().split('\n').pop()!);
}

// A helper the side's process starts by a double fork and a new session: it does a fixed amount of
// work, writes its own CPU time (as its kernel counts it) and exits; its parent has long exited.
const HELPER = join(dir, 'helper.sh');
writeFileSync(
  HELPER,
  `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done\ncat /proc/$$/stat > ${dir}/stat.tmp && mv ${dir}/stat.tmp ${dir}/helper-stat\n`,
);
chmodSync(dir, 0o777);
const ESCAPE = `
p = subprocess.Popen(["sh", "-c", "(setsid sh ${HELPER} &) ; exit 0"], preexec_fn=as_side)
p.wait()
`;

describe.skipIf(!root)("a side's account from outside its processes (as root)", () => {
  it('counts a helper that escaped by a double fork and a new session, once it is reaped, at least at its own count', () => {
    const r = python(`${ESCAPE}
while not os.path.exists(${JSON.stringify(join(dir, 'helper-stat'))}) or acct.census():
    reaper.reap()
    time.sleep(0.01)
fields = open(${JSON.stringify(join(dir, 'helper-stat'))}).read().rsplit(")", 1)[1].split()
own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
print(json.dumps({"counted": acct.cpu(), "own": own, "subreaper": reaper.enabled, "reaped": reaper.reaped}))
`);
    expect(r['subreaper']).toBe(true);
    expect(r['reaped']).toBeGreaterThanOrEqual(1);
    expect(r['own'] as number).toBeGreaterThan(0.05);
    expect(r['counted'] as number).toBeGreaterThanOrEqual(r['own'] as number);
  });

  it('stops every process of the uid at once, the escaped ones too, and kills them all', () => {
    const r = python(`
p = subprocess.Popen(["sh", "-c", "(setsid sh -c 'while :; do :; done' &) ; (sh -c 'while :; do :; done' &) ; exec sleep 600"], preexec_fn=as_side)
while len(acct.census()) < 3:
    time.sleep(0.01)
acct.stop()
stopped = acct.census()
first = acct.cpu()
second = acct.cpu()
acct.kill()
p.wait()
while acct.census():
    reaper.reap()
    time.sleep(0.01)
print(json.dumps({"states": sorted(s for _, _, s in stopped), "count": len(stopped), "same": first == second}))
`);
    expect(r['count']).toBeGreaterThanOrEqual(3);
    expect(new Set(r['states'] as string[])).toEqual(new Set(['T']));
    // read twice while stopped: the same count, to the nanosecond
    expect(r['same']).toBe(true);
  });
});
