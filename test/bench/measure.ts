import { spawn } from 'node:child_process';
import { BIN, cleanEnv } from '../helpers/cli.js';

export { BIN };

export interface Timed {
  readonly code: number | null;
  readonly ms: number;
  /** Peak resident memory of the child, in MiB (GNU time's %M). */
  readonly peakMiB: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `perfmine ...` in a child process under GNU time: wall time and peak memory. */
export function timedCli(args: readonly string[], env: Record<string, string> = {}, cwd?: string): Promise<Timed> {
  return timedNode(BIN, args, env, cwd);
}

/** Runs a JavaScript file with this Node in a child process under GNU time: wall time and peak memory. */
export function timedNode(file: string, args: readonly string[], env: Record<string, string> = {}, cwd?: string): Promise<Timed> {
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', 'PEAK_KB=%M', process.execPath, file, ...args], { env: cleanEnv(env), ...(cwd ? { cwd } : {}) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const peak = /PEAK_KB=(\d+)/.exec(stderr);
      resolve({ code, ms: performance.now() - started, peakMiB: peak ? Number(peak[1]) / 1024 : NaN, stdout, stderr });
    });
  });
}

export async function timed<T>(fn: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}
