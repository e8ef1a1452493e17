import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { HARNESS_SCRIPT } from '../../../pipeline/services/environments/harness-files.js';

/** Fixture suites in temporary directories, and the harness run on them with the host's python3. */

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const STAND_IN_ASV = join(ROOT, 'test/fakes/asv/asv');

/** Writes the files (path -> text) under a fresh temporary directory; returns the directory. */
export function writeSuite(files: Readonly<Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'perfmine-harness-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

export function removeSuite(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program to completion (no shell). */
export function runProgram(file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(file, [...args], { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** `python3 perfmine_harness.py ARGS` in the suite directory. */
export function harness(cwd: string, ...args: string[]): Promise<Outcome> {
  return runProgram('python3', [HARNESS_SCRIPT, ...args], cwd);
}

/** The stand-in asv's discovery (`asv run --python=same --bench just-discover`): its benchmarks.json. */
export async function standInBenchmarks(cwd: string): Promise<Record<string, Record<string, unknown>>> {
  const r = await runProgram('python3', [STAND_IN_ASV, 'run', '--python=same', '--bench', 'just-discover'], cwd);
  if (r.code !== 0) throw new Error(`stand-in asv failed: ${r.stderr}`);
  return JSON.parse(readFileSync(join(cwd, 'results/benchmarks.json'), 'utf8')) as Record<string, Record<string, unknown>>;
}

/** Whether a process exists and is not a zombie. */
export function alive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return false;
  try {
    const text = readFileSync(stat, 'utf8');
    const state = text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** The children of a (single-threaded) process, from /proc. */
export function childrenOf(pid: number): number[] {
  const path = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

export type Line = Record<string, unknown>;

/** A running `serve`: send commands, read protocol lines, see stderr and the exit. */
export class ServeClient {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly lines: Line[] = [];
  readonly rawStdout: string[] = [];
  stderr = '';
  private waiting: ((line: Line) => void)[] = [];
  private readonly exited: Promise<number | null>;

  constructor(cwd: string, globalArgs: readonly string[] = [], serveArgs: readonly string[] = [], env: NodeJS.ProcessEnv = process.env) {
    this.proc = spawn('python3', [HARNESS_SCRIPT, ...globalArgs, 'serve', ...serveArgs], { cwd, env });
    this.proc.stderr.setEncoding('utf8');
    this.proc.stderr.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    const rl = createInterface({ input: this.proc.stdout });
    rl.on('line', (text) => {
      this.rawStdout.push(text);
      let line: Line;
      try {
        line = JSON.parse(text) as Line;
      } catch {
        return; // not a protocol line: kept in rawStdout for the tests to see
      }
      const next = this.waiting.shift();
      if (next) next(line);
      else this.lines.push(line);
    });
    this.exited = new Promise((resolve) => this.proc.on('exit', (code) => resolve(code)));
  }

  /**
   * Resolves once stderr holds `text`: the worker's stderr reaches us on its own pipe, possibly
   * after the answer that follows it on stdout.
   */
  stderrContains(text: string): Promise<void> {
    if (this.stderr.includes(text)) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!this.stderr.includes(text)) return;
        this.proc.stderr.off('data', check);
        resolve();
      };
      this.proc.stderr.on('data', check);
    });
  }

  /** The next protocol line. */
  next(): Promise<Line> {
    const line = this.lines.shift();
    if (line) return Promise.resolve(line);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  send(command: unknown): void {
    this.proc.stdin.write(typeof command === 'string' ? `${command}\n` : `${JSON.stringify(command)}\n`);
  }

  /** Sends a command and returns its answer. */
  async ask(command: Line): Promise<Line> {
    this.send(command);
    return this.next();
  }

  /** A batch command with the spec's defaults. */
  batch(id: number, benchmark: string, fields: Partial<Record<string, unknown>> = {}): Promise<Line> {
    return this.ask({
      id,
      op: 'batch',
      benchmark,
      param: 0,
      samples: 1,
      number: 0,
      warmup: null,
      sample_time: null,
      timeout: null,
      ...fields,
    });
  }

  exit(): Promise<number | null> {
    return this.exited;
  }

  kill(): void {
    this.proc.kill('SIGKILL');
  }
}
