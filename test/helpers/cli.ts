import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { BUILT_BIN } from './build.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The compiled `perfmine` (dist/, built by `npm run build`, `npm ci` and vitest's global setup): what ships is what is tested. */
export const BIN = BUILT_BIN;

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Environment for child processes: no credentials or perfmine settings leak in from the host. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(PERFMINE_|GITHUB_TOKEN|OPENAI_|GOOGLE_APPLICATION|BIGQUERY_)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/** Starts a node process on a script (TypeScript through tsx's loader, in the same process). */
export function spawnNode(
  script: string,
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): ChildProcessWithoutNullStreams {
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  return spawn(process.execPath, [...loader, script, ...args], { cwd: options.cwd ?? REPO_ROOT, env: cleanEnv(options.env) });
}

export function collect(child: ChildProcessWithoutNullStreams, input?: string): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  if (input !== undefined) child.stdin.end(input);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs the real `perfmine` executable. */
export function runCli(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; input?: string } = {},
): Promise<CliResult> {
  return collect(spawnNode(BIN, args, options), options.input ?? '');
}

/** Resolves when a line matching `pattern` appears on the stream (no polling, no sleeps). */
export function waitForLine(stream: NodeJS.ReadableStream, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (d: Buffer) => {
      buffer += d.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (pattern.test(line)) {
          stream.off('data', onData);
          resolve(line);
          return;
        }
      }
    };
    stream.on('data', onData);
    stream.on('end', () => reject(new Error(`stream ended before a line matched ${pattern}`)));
  });
}

/**
 * How tests run the CLI as a user that file permissions apply to. Root ignores them (CI runs as
 * root), so there the child runs as `nobody` through setpriv (util-linux); any other user is
 * subject to them already. `available` is false as root without setpriv: the tests that need it
 * say so and are skipped rather than pass without checking anything.
 */
export const UNPRIVILEGED: { readonly available: boolean; readonly prefix: readonly string[] } = (() => {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return { available: true, prefix: [] };
  const probe = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'true']);
  return probe.status === 0
    ? { available: true, prefix: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] }
    : { available: false, prefix: [] };
})();

/** Runs the real `perfmine` executable as the unprivileged user (see UNPRIVILEGED). Files it must reach need world read (and directories world execute) permission. */
export function runCliUnprivileged(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<CliResult> {
  if (!UNPRIVILEGED.available) throw new Error('no way to run as an unprivileged user here (root without setpriv)');
  const [command, ...wrap] = UNPRIVILEGED.prefix;
  const argv = [process.execPath, BIN, ...args];
  const env = cleanEnv({ HOME: tmpdir(), ...options.env });
  const child =
    command === undefined
      ? spawn(argv[0]!, argv.slice(1), { cwd: options.cwd ?? REPO_ROOT, env })
      : spawn(command, [...wrap, ...argv], { cwd: options.cwd ?? REPO_ROOT, env });
  return collect(child, '');
}

/** True when stderr holds a stack trace or the words of a bug report. */
export function looksLikeABug(stderr: string): boolean {
  return /internal error|a bug in perfmine|^\s+at .+[:(]/m.test(stderr);
}
