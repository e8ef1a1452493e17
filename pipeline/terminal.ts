import { writeSync } from 'node:fs';

/**
 * The one line at the bottom of a terminal where progress bars live. Log lines are written
 * above it so that bars and logs never garble each other. Writes are synchronous so that nothing
 * is lost when the process exits.
 */
export class StatusLine {
  readonly #fd: number;
  #text = '';

  constructor(fd = 2) {
    this.#fd = fd;
  }

  /** Replaces the status line (empty text clears it). */
  set(text: string): void {
    this.#text = text;
    this.#write(`\r\x1b[K${text}`);
  }

  /** Writes a full line above the status line, then redraws it. */
  writeAbove(line: string): void {
    const body = line.endsWith('\n') ? line : `${line}\n`;
    this.#write(this.#text ? `\r\x1b[K${body}${this.#text}` : body);
  }

  /** Leaves the current status text as a normal line. */
  commit(): void {
    if (this.#text) this.#write('\n');
    this.#text = '';
  }

  #write(text: string): void {
    try {
      writeSync(this.#fd, text);
    } catch {
      // stderr closed: nothing useful to do
    }
  }
}
