import { posix } from 'node:path';
import { shellQuote } from './shell.js';

/**
 * Files written into a fresh container by its own command (no mounts): each file travels
 * base64-encoded inside the script. For small files only: one argument may hold at most 128 KiB
 * (Linux MAX_ARG_STRLEN), so larger inputs go into a derived image instead. Pure.
 */

/** Bytes of script a container command may carry comfortably. */
export const MAX_INLINE_SCRIPT = 100_000;

export function writeFilesScript(files: Readonly<Record<string, string>>): string {
  const lines: string[] = [];
  for (const path of Object.keys(files).sort()) {
    const b64 = Buffer.from(files[path]!, 'utf8').toString('base64');
    lines.push(
      `mkdir -p ${shellQuote(posix.dirname(path))} && printf '%s' ${shellQuote(b64)} | base64 -d > ${shellQuote(path)} || exit 91`,
    );
  }
  return lines.join('\n');
}
