import { PassThrough, type Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { TailBuffer } from './tail.js';

/**
 * A long-lived container that a driver talks to in lines: stdin stays open, stdout is read line by
 * line, stderr is kept as a tail. Made by DockerService.session (which creates, limits, labels and
 * starts the container); removed by close() or kill() in every case.
 */

export type LineRead = { readonly line: string } | { readonly timedOut: true } | { readonly ended: true };

export class ContainerSession {
  readonly #container: Docker.Container;
  readonly #stream: Duplex;
  readonly #stderr: TailBuffer;
  readonly #lines: string[] = [];
  readonly #waiters = new Set<() => void>();
  readonly #lifetime: NodeJS.Timeout;
  #partial = '';
  #ended = false;
  #removed: Promise<void> | null = null;
  /** Resolves with the container's exit code (null when it was killed by perfmine). */
  readonly exited: Promise<number | null>;
  #killed = false;

  constructor(options: {
    container: Docker.Container;
    stream: Duplex;
    demux: (stream: Duplex, out: NodeJS.WritableStream, err: NodeJS.WritableStream) => void;
    waited: Promise<{ StatusCode: number }>;
    stderrChars: number;
    maxLifetimeMs: number;
  }) {
    this.#container = options.container;
    this.#stream = options.stream;
    this.#stderr = new TailBuffer(options.stderrChars);
    const stdout = new PassThrough();
    stdout.setEncoding('utf8');
    stdout.on('data', (chunk: string) => this.#take(chunk));
    options.demux(this.#stream, stdout, this.#stderr);
    const end = () => {
      if (this.#partial) this.#lines.push(this.#partial);
      this.#partial = '';
      this.#ended = true;
      this.#wake();
    };
    this.#stream.on('end', end);
    this.#stream.on('close', end);
    this.#stream.on('error', end);
    this.exited = options.waited.then(
      (s) => (this.#killed ? null : s.StatusCode),
      () => null,
    );
    void this.exited.then(end);
    this.#lifetime = setTimeout(() => void this.kill(), options.maxLifetimeMs);
    this.#lifetime.unref();
  }

  #take(chunk: string): void {
    const text = this.#partial + chunk;
    const parts = text.split('\n');
    this.#partial = parts.pop() ?? '';
    for (const p of parts) this.#lines.push(p.endsWith('\r') ? p.slice(0, -1) : p);
    if (parts.length > 0) this.#wake();
  }

  #wake(): void {
    for (const w of [...this.#waiters]) w();
  }

  /** Writes one line to the container's stdin. */
  send(line: string): void {
    if (!this.#ended) this.#stream.write(`${line}\n`);
  }

  /** The next stdout line, or why there is none: the time ran out, or the container's output ended. */
  async nextLine(timeoutMs: number, signal?: AbortSignal): Promise<LineRead> {
    for (;;) {
      const line = this.#lines.shift();
      if (line !== undefined) return { line };
      if (this.#ended) return { ended: true };
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      const outcome = await new Promise<'wake' | 'timeout' | 'abort'>((resolve) => {
        const done = (why: 'wake' | 'timeout' | 'abort') => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          signal?.removeEventListener('abort', onAbort);
          resolve(why);
        };
        const wake = () => done('wake');
        const onAbort = () => done('abort');
        const timer = setTimeout(() => done('timeout'), timeoutMs);
        this.#waiters.add(wake);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
      if (outcome === 'timeout') return { timedOut: true };
      if (outcome === 'abort') throw signal?.reason ?? new Error('aborted');
    }
  }

  /** The tail of what the container wrote to stderr. */
  stderr(): string {
    return this.#stderr.text();
  }

  /** Ends stdin and lets the process exit within `graceMs`, then kills it; the container is removed. */
  async close(graceMs = 10_000): Promise<number | null> {
    if (!this.#ended) this.#stream.end();
    const timer = setTimeout(() => void this.kill(), graceMs);
    const code = await this.exited;
    clearTimeout(timer);
    await this.#remove();
    return code;
  }

  /** Kills the container at once and removes it. */
  async kill(): Promise<void> {
    this.#killed = true;
    await this.#container.kill().catch(() => undefined);
    await this.#remove();
  }

  #remove(): Promise<void> {
    clearTimeout(this.#lifetime);
    this.#removed ??= this.#container.remove({ force: true }).then(
      () => undefined,
      () => undefined,
    );
    return this.#removed;
  }
}
