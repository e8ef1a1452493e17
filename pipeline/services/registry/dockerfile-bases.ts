/**
 * The images a task's Dockerfile starts from, and the same Dockerfile starting from other
 * references (`perfmine publish --registry`: the base by digest). Reads the Dockerfile's `FROM`
 * instructions as Docker does (`FROM [--platform=...] image [AS stage]`; a `FROM` naming an earlier
 * stage is not an image). Pure.
 */

const FROM = /^(\s*FROM\s+)((?:--\S+\s+)*)(\S+)(\s+AS\s+(\S+))?(\s*)$/i;

interface FromLine {
  readonly index: number;
  readonly image: string;
  readonly stage: string | null;
}

function fromLines(lines: readonly string[]): FromLine[] {
  const out: FromLine[] = [];
  lines.forEach((line, index) => {
    const m = FROM.exec(line);
    if (m) out.push({ index, image: m[3]!, stage: m[5] ?? null });
  });
  return out;
}

/** The images (not earlier stages) the Dockerfile's FROM instructions name, each once, in order. */
export function dockerfileBases(dockerfile: string): string[] {
  const stages = new Set<string>();
  const out: string[] = [];
  for (const f of fromLines(dockerfile.split('\n'))) {
    if (!stages.has(f.image.toLowerCase()) && !out.includes(f.image)) out.push(f.image);
    if (f.stage) stages.add(f.stage.toLowerCase());
  }
  return out;
}

/** The Dockerfile with each FROM of an image in `to` naming its replacement instead; throws when one of them is named by none. */
export function rebaseDockerfile(dockerfile: string, to: ReadonlyMap<string, string>): string {
  const lines = dockerfile.split('\n');
  const used = new Set<string>();
  for (const f of fromLines(lines)) {
    const target = to.get(f.image);
    if (target === undefined) continue;
    const m = FROM.exec(lines[f.index]!)!;
    lines[f.index] = `${m[1]}${m[2]}${target}${m[4] ?? ''}${m[6] ?? ''}`;
    used.add(f.image);
  }
  const unused = [...to.keys()].filter((k) => !used.has(k));
  if (unused.length > 0) throw new RangeError(`the Dockerfile does not start from ${unused.join(', ')}`);
  return lines.join('\n');
}
