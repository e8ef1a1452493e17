import { execFile } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';

/**
 * One Harbor trial of an exported perfmine task on the real Docker engine, in Harbor's order: start
 * the task's image as Harbor's Docker environment does (no network, the task's CPUs and memory,
 * /logs/verifier and /logs/agent mounted from the host and writable by everyone), run the agent
 * as the task's [agent] user (the oracle: solution/ copied to /solution, then solve.sh; else a
 * bash script in /repo), copy tests/ to /tests (`docker cp tests/. container:/tests`, as Harbor's
 * `docker compose cp` does), run tests/test.sh as root ([verifier] user) with its output in
 * /logs/verifier/test-stdout.txt, and read the reward Harbor reads (reward.json, else reward.txt).
 */

const execFileP = promisify(execFile);

/** Harbor reads reward.json as a flat object of numbers. */
export const rewardJson = z.record(z.string(), z.number());

export interface TrialFinding {
  readonly rule: string;
  readonly severity: 'hack' | 'suspect';
  readonly path: string;
  readonly message: string;
}

export interface TrialWorkload {
  readonly name: string;
  readonly task_improved: boolean;
  readonly verdict: string;
  readonly speedup: number;
  readonly reason?: string | null;
  readonly outside?: { consistent: boolean; median_log_q: number; tolerance: number } | null;
  readonly memo?: { memoised: boolean; why?: string } | null;
}

export interface Trial {
  readonly agent: { readonly code: number; readonly out: string };
  readonly verifier: { readonly code: number; readonly out: string };
  /** reward.json as Harbor parses it (null: none, or not a flat object of numbers). */
  readonly reward: Record<string, number> | null;
  readonly rewardTxt: number | null;
  /** perfmine-verify.json (null when the verifier wrote none). */
  readonly details: {
    readonly failure: { check: string; message: string } | null;
    readonly error?: { check: string; message: string } | null;
    readonly change?: { paths: string[]; dropped: string[] };
    readonly findings?: TrialFinding[];
    readonly workloads?: TrialWorkload[];
    readonly timing?: Record<string, number>;
  } | null;
  /** What the container shows after the verifier: /tmp's entries, /repo's mode and owner, the processes not run by root (live ones). */
  readonly after: string;
  /** Seconds test.sh ran. */
  readonly seconds: number;
}

export interface TrialOptions {
  /** The Harbor task folder (task.toml, environment/, solution/, tests/). */
  readonly task: string;
  /** The image built from its environment/. */
  readonly image: string;
  /** Where the trial's /logs go on the host. */
  readonly logs: string;
  /** A name for the container (unique per trial). */
  readonly container: string;
  /** The label every container of the run carries (removed at the end of the suite). */
  readonly label: string;
  /** 'oracle', or a bash script run as the agent in /repo. */
  readonly agent: string;
  /** Files copied to /tmp/attacks (readable by the agent) before the agent runs. */
  readonly attacks?: string;
  /** PERFMINE_VERIFY_ROUNDS (the task's protocol when absent). */
  readonly rounds?: number;
  /** PERFMINE_VERIFY_DETECTOR (enforce by default; report: the findings without their effect). */
  readonly detector?: 'enforce' | 'report';
  /** Harbor's verifier timeout: test.sh is killed after this many seconds. */
  readonly verifierTimeout?: number;
  /** Another Docker engine's DOCKER_HOST (the trial runs there); this machine's by default. */
  readonly host?: string;
}

/** The docker CLI against this machine's engine, or another's (`host`: its DOCKER_HOST). */
export async function sh(args: readonly string[], timeoutMs = 600_000, host?: string): Promise<{ code: number; out: string }> {
  try {
    const env = host ? { ...process.env, DOCKER_HOST: host } : process.env;
    const r = await execFileP('docker', [...args], { maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs, env });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

function readIf(path: string): string | null {
  return existsSync(path) && lstatSync(path).isFile() ? readFileSync(path, 'utf8') : null;
}

export async function harborTrial(o: TrialOptions): Promise<Trial> {
  for (const d of ['verifier', 'agent']) {
    mkdirSync(join(o.logs, d), { recursive: true });
    chmodSync(join(o.logs, d), 0o777);
  }
  const started = await sh(
    [
      'run',
      '-d',
      '--name',
      o.container,
      '--label',
      `perfmine.run=${o.label}`,
      '--network',
      'none',
      '--cpus',
      '2',
      '--memory',
      '2g',
      '-w',
      '/repo',
      '-v',
      `${join(o.logs, 'verifier')}:/logs/verifier`,
      '-v',
      `${join(o.logs, 'agent')}:/logs/agent`,
      o.image,
      'sleep',
      'infinity',
    ],
    undefined,
    o.host,
  );
  if (started.code !== 0) throw new Error(`docker run: ${started.out}`);
  try {
    if (o.attacks) {
      await sh(['cp', `${o.attacks}/.`, `${o.container}:/tmp/attacks`], undefined, o.host);
      await sh(['exec', o.container, 'chmod', '-R', 'a+rX', '/tmp/attacks'], undefined, o.host);
    }
    let ran: { code: number; out: string };
    if (o.agent === 'oracle') {
      await sh(['cp', `${join(o.task, 'solution')}/.`, `${o.container}:/solution`], undefined, o.host);
      ran = await sh(['exec', '-u', 'agent', '-w', '/repo', o.container, 'bash', '/solution/solve.sh'], undefined, o.host);
    } else ran = await sh(['exec', '-u', 'agent', '-w', '/repo', o.container, 'bash', '-c', o.agent], undefined, o.host);
    const copied = await sh(['cp', `${join(o.task, 'tests')}/.`, `${o.container}:/tests`], undefined, o.host);
    if (copied.code !== 0) throw new Error(`docker cp tests: ${copied.out}`);
    const env = [
      ...(o.rounds ? ['-e', `PERFMINE_VERIFY_ROUNDS=${o.rounds}`] : []),
      ...(o.detector ? ['-e', `PERFMINE_VERIFY_DETECTOR=${o.detector}`] : []),
    ];
    const limit = o.verifierTimeout ?? 1500;
    const t0 = Date.now();
    const verifier = await sh(
      [
        'exec',
        '-u',
        'root',
        '-w',
        '/repo',
        ...env,
        o.container,
        'timeout',
        '-s',
        'KILL',
        String(limit),
        'bash',
        '-c',
        'bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1',
      ],
      (limit + 120) * 1000,
      o.host,
    );
    const seconds = (Date.now() - t0) / 1000;
    const stdout = readIf(join(o.logs, 'verifier', 'test-stdout.txt')) ?? '';
    const after = await sh(
      [
        'exec',
        o.container,
        'bash',
        '-c',
        'ls -a /tmp; stat -c "repo %a %U" /repo; for d in /proc/[0-9]*; do s=$(cat $d/stat 2>/dev/null) || continue; st=$(echo "${s##*) }" | cut -d" " -f1); u=$(awk \'/^Uid:/ {print $2}\' $d/status); [ "$u" != 0 ] && [ "$st" != Z ] && echo "live $d uid $u"; done; true',
      ],
      undefined,
      o.host,
    );
    const rewardText = readIf(join(o.logs, 'verifier', 'reward.json'));
    let reward: Record<string, number> | null = null;
    try {
      reward = rewardText === null ? null : rewardJson.parse(JSON.parse(rewardText));
    } catch {
      reward = null;
    }
    const txt = readIf(join(o.logs, 'verifier', 'reward.txt'));
    const details = readIf(join(o.logs, 'verifier', 'perfmine-verify.json'));
    return {
      agent: ran,
      verifier: { code: verifier.code, out: stdout },
      reward,
      rewardTxt: txt === null ? null : Number(txt),
      details: details === null ? null : (JSON.parse(details) as Trial['details']),
      after: after.out,
      seconds,
    };
  } finally {
    await sh(['rm', '-f', o.container], undefined, o.host);
  }
}

/** The trial's log, for a failed assertion's message. */
export function shown(name: string, t: Trial): string {
  return `--- ${name}: agent exit ${t.agent.code}\n${t.agent.out}\n--- verifier exit ${t.verifier.code} in ${t.seconds.toFixed(0)} s\n${t.verifier.out.replace(/^\[perfmine-bench\] round .*\n/gm, '')}`;
}
