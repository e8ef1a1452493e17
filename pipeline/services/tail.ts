import { Writable } from 'node:stream';

/** Keeps the last `limit` characters written to it (log tails of long builds). */
export class TailBuffer extends Writable {
  readonly limit: number;
  #text = '';
  #total = 0;

  constructor(limit: number) {
    super();
    this.limit = limit;
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    this.#total += text.length;
    this.#text = (this.#text + text).slice(-this.limit);
    callback();
  }

  /** The tail, with a marker when earlier output was cut. */
  text(): string {
    return this.#total > this.limit ? `[... ${this.#total - this.limit} earlier characters cut]\n${this.#text}` : this.#text;
  }
}
