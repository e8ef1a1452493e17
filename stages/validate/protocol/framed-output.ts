/**
 * How scripts in a container hand files back without a mount: lines on stdout of the form
 * `@@perfmine <key> <value>` and `@@perfmine file <kind> <name> <base64 content>`. Everything
 * else on stdout is ignored. Pure.
 */

export const FRAME = '@@perfmine';

export interface FramedFile {
  readonly kind: string;
  readonly name: string;
  readonly content: string;
}

export interface FramedOutput {
  /** Last value of each `@@perfmine <key> <value>` line (`file` lines excluded). */
  readonly values: ReadonlyMap<string, string>;
  readonly files: readonly FramedFile[];
}

export function parseFramedOutput(stdout: string): FramedOutput {
  const values = new Map<string, string>();
  const files: FramedFile[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith(`${FRAME} `)) continue;
    const parts = line
      .slice(FRAME.length + 1)
      .trimEnd()
      .split(' ');
    const key = parts[0] ?? '';
    if (key === 'file') {
      const [, kind, name, data] = parts;
      if (kind && name) files.push({ kind, name, content: Buffer.from(data ?? '', 'base64').toString('utf8') });
    } else if (key !== '') {
      values.set(key, parts.slice(1).join(' '));
    }
  }
  return { values, files };
}

/** The integer value of a key, or null when absent or not an integer. */
export function framedInt(out: FramedOutput, key: string): number | null {
  const v = out.values.get(key);
  return v !== undefined && /^-?\d+$/.test(v) ? Number(v) : null;
}

/** Shell lines that print a file framed (nothing when it does not exist). `tailBytes` keeps only its end. */
export function emitFileLines(kind: string, name: string, path: string, tailBytes?: number): string {
  const read = tailBytes === undefined ? `base64 -w0 ${path}` : `tail -c ${tailBytes} ${path} | base64 -w0`;
  return `if [ -f ${path} ]; then printf '%s\\n' "${FRAME} file ${kind} ${name} $(${read})"; fi`;
}
