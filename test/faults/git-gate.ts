/**
 * A gate in front of every git process a child perfmine starts: a `git` wrapper first on the
 * child's PATH asks this process (over a loopback TCP connection) whether it may run, and waits
 * for the answer. The test decides per arrival (1-based): let it run, or hold it, which keeps the
 * child exactly at that point until the test kills it. No timing is involved.
 *
 *   const gate = await startGitGate();
 *   gate.decide((n) => (n === k ? (cli.kill(), 'hold') : 'run'));
 *   const cli = startCli(args, { env: { ...env, ...gate.env } });
 *
 * The same pattern can hold any helper process a stage starts through PATH.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type GateDecision = 'run' | 'hold';

export interface GitGate {
  /** Environment for the child: PATH with the wrapper first, and where to reach the gate. */
  readonly env: Record<string, string>;
  /** Git processes that arrived so far. */
  readonly arrivals: number;
  /** The first arguments of each arrival, in order (for messages). */
  readonly log: readonly string[];
  decide(rule: ((arrival: number, args: string) => GateDecision) | null): void;
  /** Arrivals counted from zero again. */
  reset(): void;
  close(): Promise<void>;
}

const WRAPPER = `#!/usr/bin/env bash
# perfmine fault tests: ask the test's gate whether this git process may run.
if exec 3<>"/dev/tcp/127.0.0.1/\${PERFMINE_TEST_GIT_GATE}"; then
  args="$*"; args="\${args##*-C }"; args="\${args#* }"
  printf '%s\\n' "\${args:0:200}" >&3
  IFS= read -r _answer <&3 || true
  exec 3>&- 3<&-
fi
exec "\${PERFMINE_TEST_REAL_GIT}" "$@"
`;

export async function startGitGate(): Promise<GitGate> {
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const bin = mkdtempSync(join(tmpdir(), 'perfmine-git-gate-'));
  writeFileSync(join(bin, 'git'), WRAPPER);
  chmodSync(join(bin, 'git'), 0o755);
  let rule: ((arrival: number, args: string) => GateDecision) | null = null;
  let arrivals = 0;
  const log: string[] = [];
  const held = new Set<Socket>();
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      held.delete(socket);
    });
    socket.on('error', () => undefined);
    let buffer = '';
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const nl = buffer.indexOf('\n');
      if (nl < 0 || held.has(socket)) return;
      const args = buffer.slice(0, nl);
      arrivals += 1;
      log.push(args);
      if ((rule?.(arrivals, args) ?? 'run') === 'hold') held.add(socket);
      else socket.end('run\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, PERFMINE_TEST_GIT_GATE: String(port), PERFMINE_TEST_REAL_GIT: realGit },
    get arrivals() {
      return arrivals;
    },
    log,
    decide(next) {
      rule = next;
    },
    reset() {
      arrivals = 0;
      log.length = 0;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(bin, { recursive: true, force: true });
    },
  };
}
