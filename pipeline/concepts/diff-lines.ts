import { parsePatch } from './patch.js';
import type { FileChange } from './records/pull-request.js';

/**
 * The lines of a unified diff, file by file and hunk by hunk. Pure.
 *
 * A hunk's `base` lines are what exists at the base commit near the change: its context lines,
 * its removed lines and the text git prints after the `@@ ... @@` header (the enclosing function
 * or class). Binary sections have no hunks.
 */
export interface DiffHunk {
  /** Text after the second `@@` of the header (often `def name(...)`), trimmed. */
  readonly header: string;
  /** The base side's first line and line count (`@@ -oldStart,oldLines ...`); 0 lines: an insertion after line oldStart. */
  readonly oldStart: number;
  readonly oldLines: number;
  /** The hunk's lines in order, each with its side. */
  readonly lines: readonly { readonly side: 'added' | 'removed' | 'context'; readonly text: string }[];
}

export interface DiffFile {
  readonly path: string;
  readonly previousPath: string | null;
  readonly status: FileChange['status'];
  readonly binary: boolean;
  readonly hunks: readonly DiffHunk[];
}

export function diffFiles(diff: string): DiffFile[] {
  return parsePatch(diff).map((section) => ({
    path: section.path,
    previousPath: section.previousPath,
    status: section.status,
    binary: section.binary,
    hunks: section.binary ? [] : hunksOf(section.text),
  }));
}

function hunksOf(section: string): DiffHunk[] {
  const hunks: { header: string; oldStart: number; oldLines: number; lines: DiffHunk['lines'][number][] }[] = [];
  let current: (typeof hunks)[number] | null = null;
  for (const line of section.split('\n')) {
    if (line.startsWith('@@')) {
      const m = /^@@ -(\d+)(?:,(\d+))? [^@]* @@ ?(.*)$/.exec(line);
      current = {
        header: (m?.[3] ?? '').trim(),
        oldStart: Number(m?.[1] ?? 0),
        oldLines: m?.[2] === undefined ? 1 : Number(m[2]),
        lines: [],
      };
      hunks.push(current);
      continue;
    }
    if (!current) continue;
    const c = line[0];
    if (c === '+') current.lines.push({ side: 'added', text: line.slice(1) });
    else if (c === '-') current.lines.push({ side: 'removed', text: line.slice(1) });
    else if (c === ' ') current.lines.push({ side: 'context', text: line.slice(1) });
    // `\ No newline at end of file` and the empty string after the last newline carry no code
  }
  return hunks;
}

/** Whether a line is a whole-line comment in Python, C-like or shell syntax (not code). */
export function isCommentLine(text: string): boolean {
  return /^\s*(?:#|\/\/|\/\*|\*(?:\s|\/|$))/.test(text);
}

/**
 * A line of Python without its trailing `# comment` (a `#` outside string quotes, as far as a
 * count of the quotes before it tells; good enough for identifiers, not a parser).
 */
export function withoutTrailingComment(text: string): string {
  let single = 0;
  let double = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i += 1;
    else if (c === "'" && double % 2 === 0) single += 1;
    else if (c === '"' && single % 2 === 0) double += 1;
    else if (c === '#' && single % 2 === 0 && double % 2 === 0) return text.slice(0, i);
  }
  return text;
}

/** The code of an added or removed line: nothing for a whole-line comment, else the line without its trailing comment. */
export function codeOf(text: string): string {
  return isCommentLine(text) ? '' : withoutTrailingComment(text);
}
