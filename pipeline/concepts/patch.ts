/**
 * git's unified diff as data: a patch split into file sections, with the paths git quotes
 * unquoted. Pure; shared by the git adapter, collect's GitHub source and the stages that read
 * a stored diff.
 */
import type { FileChange } from './records/pull-request.js';

export interface PatchSection {
  readonly path: string;
  readonly previousPath: string | null;
  readonly status: FileChange['status'];
  readonly binary: boolean;
  /** The section's text, from `diff --git` to the next one. */
  readonly text: string;
}

/** Splits a unified git diff into its file sections. */
export function parsePatch(patch: string): PatchSection[] {
  const sections: PatchSection[] = [];
  let start = patch.indexOf('diff --git ');
  while (start >= 0) {
    const next = patch.indexOf('\ndiff --git ', start + 1);
    const end = next < 0 ? patch.length : next + 1;
    sections.push(parseSection(patch.slice(start, end)));
    start = next < 0 ? -1 : next + 1;
  }
  return sections;
}

function parseSection(text: string): PatchSection {
  const lines = text.split('\n');
  let status: FileChange['status'] = 'modified';
  let from: string | null = null;
  let to: string | null = null;
  let renameFrom: string | null = null;
  let renameTo: string | null = null;
  let binary = false;
  let modeChange = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('@@')) break;
    if (line.startsWith('new file mode')) status = 'added';
    else if (line.startsWith('deleted file mode')) status = 'removed';
    else if (line.startsWith('rename from ')) renameFrom = unquoteGitPath(line.slice(12));
    else if (line.startsWith('rename to ')) renameTo = unquoteGitPath(line.slice(10));
    else if (line.startsWith('copy from ')) {
      renameFrom = unquoteGitPath(line.slice(10));
      status = 'copied';
    } else if (line.startsWith('copy to ')) renameTo = unquoteGitPath(line.slice(8));
    else if (line.startsWith('old mode ')) modeChange = true;
    else if (line.startsWith('--- ')) from = diffSidePath(line.slice(4), 'a/');
    else if (line.startsWith('+++ ')) to = diffSidePath(line.slice(4), 'b/');
    else if (line.startsWith('Binary files ') || line === 'GIT binary patch') binary = true;
  }
  if (renameFrom !== null && renameTo !== null) {
    return { path: renameTo, previousPath: renameFrom, status: status === 'copied' ? 'copied' : 'renamed', binary, text };
  }
  let path = to ?? from;
  if (path === null) {
    const fromBinary = binary ? binaryLinePaths(lines) : null;
    path = fromBinary ?? headerPath(lines[0]!);
  }
  if (status === 'modified' && modeChange && from === null && to === null && !binary) status = 'changed';
  return { path, previousPath: null, status, binary, text };
}

/** `a/path`, `"a/p\303\251"` or `/dev/null` (→ null); a trailing TAB (names with spaces) is dropped. */
function diffSidePath(raw: string, prefix: string): string | null {
  const value = raw.endsWith('\t') ? raw.slice(0, -1) : raw;
  if (value === '/dev/null') return null;
  const path = unquoteGitPath(value);
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

function binaryLinePaths(lines: readonly string[]): string | null {
  const line = lines.find((l) => l.startsWith('Binary files '));
  if (!line) return null;
  const m = /^Binary files (.*) and (.*) differ$/.exec(line);
  if (!m) return null;
  return diffSidePath(m[2]!, 'b/') ?? diffSidePath(m[1]!, 'a/');
}

/** The path of `diff --git a/P b/P` when both sides are equal (quoted or not). */
export function headerPath(line: string): string {
  const rest = line.slice('diff --git '.length);
  if (rest.startsWith('"')) {
    const end = closingQuote(rest, 0);
    return diffSidePath(rest.slice(0, end + 1), 'a/') ?? '';
  }
  // `a/P b/P`: both halves have the same length.
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half)) return rest.slice(2, half);
  return rest.slice(2, rest.indexOf(' b/'));
}

function closingQuote(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === '"') return i;
  }
  return text.length - 1;
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** Undoes git's C-style quoting of a path (`"\303\251.txt"` → `é.txt`); unquoted text is returned as is. */
export function unquoteGitPath(text: string): string {
  if (!(text.startsWith('"') && text.endsWith('"') && text.length >= 2)) return text;
  const body = text.slice(1, -1);
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = body[i + 1] ?? '';
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(ESCAPES[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
