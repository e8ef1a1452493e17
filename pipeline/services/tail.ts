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
    return markCut(this.#text, this.#total - this.limit);
  }
}

/** A kept tail of output, headed by how many earlier characters (or bytes, where only bytes were counted) were cut when some were. */
export function markCut(tail: string, cut: number, unit: 'characters' | 'bytes' = 'characters'): string {
  return cut > 0 ? `[... ${cut} earlier ${unit} cut]\n${tail}` : tail;
}

/** The line `markCut` heads a tail with. */
export const CUT_MARKER_LINE = /^\[\.\.\. \d+ earlier (?:characters|bytes) cut\]$/;
