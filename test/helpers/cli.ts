import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = fileURLToPath(new URL('../../pipeline/cli/bin.js', import.meta.url));

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
export function spawnNode(script: string, args: readonly string[], options: { env?: Record<string, string>; cwd?: string } = {}): ChildProcessWithoutNullStreams {
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
export function runCli(args: readonly string[], options: { env?: Record<string, string>; cwd?: string; input?: string } = {}): Promise<CliResult> {
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
