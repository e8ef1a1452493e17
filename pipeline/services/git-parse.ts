/**
 * Parsers for git's output (pure: text in, data out). The git adapter asks git for records laid
 * out as `\0<header fields separated by \x1f>\0<numstat lines>\n<patch>`, so that one process
 * gives many commits with their file statistics and diffs.
 */
import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { parsePatch, unquoteGitPath, type PatchSection } from '../concepts/patch.js';
import type { FileChange } from '../concepts/records/pull-request.js';

export { headerPath, parsePatch, unquoteGitPath, type PatchSection } from '../concepts/patch.js';

/**
 * The `--format` of `git log` records with a message and a body (numstat lines, patch): each
 * record is `\0<marker>H<header>\0<marker>B<body>`. A patch may hold NUL bytes (git shows a
 * file as text when its first 8,000 bytes have none: Adobe Illustrator and PDF files do, with
 * NULs further on), so records are told apart by a marker made anew for every git process
 * (`newLogMarker`), which no file's content or message can be expected to hold. `%B` (the raw
 * message) is last in the header: it may hold anything.
 */
export function logFormat(marker: string): string {
  return `%x00${marker}H%H%x1f%P%x1f%at%x1f%ct%x1f%an%x1f%ae%x1f%B%x00${marker}B`;
}

/** A record marker for one git process: 24 random hex digits after `pm`. */
export function newLogMarker(): string {
  return `pm${randomBytes(12).toString('hex')}`;
}

/** A lighter format without the message body, for walking the graph. */
export const GRAPH_FORMAT = '%x00%H%x1f%P%x1f%at%x1f%ct%x1f%s%x00';

export interface CommitHeader {
  readonly sha: string;
  readonly parents: readonly string[];
  /** ISO 8601 UTC. */
  readonly authorDate: string;
  readonly committerDate: string;
  readonly authorName: string;
  readonly authorEmail: string;
  /** The whole message (GRAPH_FORMAT: the subject only). */
  readonly message: string;
}

export interface NumstatEntry {
  readonly additions: number;
  readonly deletions: number;
  readonly binary: boolean;
  /** As git printed it, unquoted; a rename reads `old => new` or `dir/{old => new}/x`. */
  readonly path: string;
}

export interface LogCommit extends CommitHeader {
  readonly files: readonly FileChange[];
  /** The commit's patch against its first parent (empty unless asked for). */
  readonly patch: string;
  /**
   * Paths of text files whose change is not UTF-8: the patch holds them as git binary patches
   * (byte-exact for `git apply`, not readable); their line counts are the text's. Absent: none.
   */
  readonly bytePatches?: readonly string[];
}

function isoFromEpoch(text: string): string {
  const seconds = Number(text);
  if (!Number.isFinite(seconds)) throw new SyntaxError(`git: not a timestamp: "${text}"`);
  return isoFromEpochSeconds(seconds);
}

/** The last second `Date#toISOString` writes with a four-digit year (9999-12-31T23:59:59Z). */
const LAST_FOUR_DIGIT_SECOND = 253_402_300_799;

const twoDigits = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/**
 * `new Date(seconds * 1000).toISOString()`, the same text, computed from the calendar rather
 * than through a Date: a collect reads two dates of each of thousands of commits, and this takes
 * half the time (days to year, month and day by Howard Hinnant's `civil_from_days`). Seconds
 * outside 1970 to 9999, or not whole, go through Date.
 */
export function isoFromEpochSeconds(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > LAST_FOUR_DIGIT_SECOND) return new Date(seconds * 1000).toISOString();
  const days = Math.floor(seconds / 86_400);
  const daySeconds = seconds - days * 86_400;
  // Days since 0000-03-01, in 400-year eras of 146,097 days; the year starts in March, so that
  // February's leap day is the year's last.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const marchMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * marchMonth + 2) / 5) + 1;
  const month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(daySeconds / 3600);
  const minutes = Math.floor((daySeconds - hours * 3600) / 60);
  const secs = daySeconds - hours * 3600 - minutes * 60;
  return `${year}-${twoDigits(month)}-${twoDigits(day)}T${twoDigits(hours)}:${twoDigits(minutes)}:${twoDigits(secs)}.000Z`;
}

/** Reads a header written with `logFormat` (7 fields) or GRAPH_FORMAT (5 fields). */
export function parseCommitHeader(text: string): CommitHeader {
  const parts = text.split('\x1f');
  if (parts.length === 5) {
    const [sha, parents, at, ct, subject] = parts as [string, string, string, string, string];
    return {
      sha,
      parents: parents ? parents.split(' ') : [],
      authorDate: isoFromEpoch(at),
      committerDate: isoFromEpoch(ct),
      authorName: '',
      authorEmail: '',
      message: subject,
    };
  }
  if (parts.length < 7) throw new SyntaxError(`git: malformed commit header (${parts.length} fields)`);
  const [sha, parents, at, ct, name, email] = parts as [string, string, string, string, string, string];
  const message = parts.slice(6).join('\x1f').replace(/\n+$/, '');
  return {
    sha,
    parents: parents ? parents.split(' ') : [],
    authorDate: isoFromEpoch(at),
    committerDate: isoFromEpoch(ct),
    authorName: name,
    authorEmail: email,
    message,
  };
}

/**
 * Parses every commit of a complete `git log --format=<logFormat(marker)>` output. A record
 * whose pieces are out of order (output that is not git's, or a marker that is not this
 * process's) is a SyntaxError naming what was found.
 */
export function parseLog(output: string, marker: string): LogCommit[] {
  const pieces = output.split(`\0${marker}`);
  if (pieces[0]!.trim() !== '') throw new SyntaxError(`git: output before the first commit: ${JSON.stringify(pieces[0]!.slice(0, 80))}`);
  const commits: LogCommit[] = [];
  for (let i = 1; i < pieces.length; i += 2) {
    const header = pieces[i]!;
    const body = pieces[i + 1];
    if (header[0] !== 'H' || body === undefined || body[0] !== 'B') {
      throw new SyntaxError(
        `git: malformed log record ${(i + 1) / 2} (expected a header and a body): ${JSON.stringify(header.slice(0, 80))}`,
      );
    }
    commits.push({ ...parseCommitHeader(header.slice(1)), ...parseCommitBody(body.slice(1)) });
  }
  return commits;
}

/**
 * Cuts raw `git log --format=<logFormat(marker)>` output, fed in chunks as git writes it, into
 * whole records (each one from its `\0<marker>H` up to the next): the records a chunk completes
 * are handed out together, as one buffer, as soon as the next one starts; the last one by `end`.
 * Each byte is copied once, however large a record.
 */
export class LogRecordSplitter {
  readonly #separator: Buffer;
  #parts: Buffer[] = [];
  #length = 0;
  /** The last bytes of the current record, where a separator cut by a chunk boundary begins. */
  #tail: Buffer = Buffer.alloc(0);

  constructor(marker: string) {
    this.#separator = Buffer.from(`\0${marker}H`);
  }

  /** The records this chunk completes, as one buffer (null: none yet). */
  push(chunk: Buffer): Buffer | null {
    const window = this.#tail.length > 0 ? Buffer.concat([this.#tail, chunk]) : chunk;
    const windowStart = this.#length - this.#tail.length;
    this.#parts.push(chunk);
    this.#length += chunk.length;
    const last = window.lastIndexOf(this.#separator);
    const cut = last >= 0 ? windowStart + last : -1;
    let records: Buffer | null = null;
    let current = window;
    if (cut > 0) {
      const data = Buffer.concat(this.#parts, this.#length);
      records = data.subarray(0, cut);
      current = data.subarray(cut);
      this.#parts = [current];
      this.#length = current.length;
    }
    const keep = Math.min(this.#separator.length - 1, this.#length);
    this.#tail = Buffer.from(current.subarray(current.length - keep));
    return records;
  }

  /** The last record (null when git wrote none). */
  end(): Buffer | null {
    const rest = Buffer.concat(this.#parts, this.#length);
    this.#parts = [];
    this.#length = 0;
    this.#tail = Buffer.alloc(0);
    if (rest.toString('utf8').trim() === '') return null;
    if (rest.indexOf(this.#separator) !== 0)
      throw new SyntaxError(`git: output before the first commit: ${JSON.stringify(rest.subarray(0, 80).toString('utf8'))}`);
    return rest;
  }
}

const NUMSTAT_RE = /^(\d+|-)\t(\d+|-)\t(.*)$/;

/** The part of a record after its header: numstat lines, then the patch (if any). */
export function parseCommitBody(text: string): { files: FileChange[]; patch: string } {
  const diffAt = text.startsWith('diff --git ') ? 0 : text.indexOf('\ndiff --git ');
  const head = diffAt < 0 ? text : text.slice(0, diffAt);
  const patch = diffAt < 0 ? '' : text.slice(diffAt === 0 ? 0 : diffAt + 1);
  const numstat: NumstatEntry[] = [];
  for (const line of head.split('\n')) {
    if (line === '') continue;
    const entry = parseNumstatLine(line);
    if (!entry) throw new SyntaxError(`git: unexpected line in numstat output: ${JSON.stringify(line.slice(0, 200))}`);
    numstat.push(entry);
  }
  const sections = patch === '' ? [] : parsePatch(patch);
  return { files: mergeFileStats(numstat, sections), patch };
}

export function parseNumstatLine(line: string): NumstatEntry | null {
  const m = NUMSTAT_RE.exec(line);
  if (!m) return null;
  const binary = m[1] === '-' || m[2] === '-';
  return {
    additions: binary ? 0 : Number(m[1]),
    deletions: binary ? 0 : Number(m[2]),
    binary,
    path: unquoteGitPath(m[3]!),
  };
}

/** `a/{old => new}/c` → { from: 'a/old/c', to: 'a/new/c' }; `old => new` likewise; else null. */
export function expandRenamePath(path: string): { from: string; to: string } | null {
  const braced = /^(.*)\{(.*) => (.*)\}(.*)$/.exec(path);
  if (braced) {
    const [, pre, from, to, post] = braced as unknown as [string, string, string, string, string];
    const join = (mid: string) => `${pre}${mid}${post}`.replace(/\/\//g, '/');
    return { from: join(from), to: join(to) };
  }
  const plain = /^(.*) => (.*)$/.exec(path);
  return plain ? { from: plain[1]!, to: plain[2]! } : null;
}

/**
 * Files from numstat (counts) and/or the patch sections (status, exact paths), which git prints
 * in the same order. With a patch alone, counts come from the hunks (what numstat counts); with
 * numstat alone, statuses are inferred from the numstat text.
 */
export function mergeFileStats(numstat: readonly NumstatEntry[], sections: readonly PatchSection[]): FileChange[] {
  if (sections.length === 0) {
    return numstat.map((n) => {
      const rename = expandRenamePath(n.path);
      return {
        path: rename ? rename.to : n.path,
        previousPath: rename ? rename.from : null,
        status: rename ? 'renamed' : 'modified',
        additions: n.additions,
        deletions: n.deletions,
        binary: n.binary,
      };
    });
  }
  if (numstat.length === 0) {
    return sections.map((s) => {
      const counts = countHunkLines(s.text);
      return {
        path: s.path,
        previousPath: s.previousPath,
        status: s.status,
        additions: counts.additions,
        deletions: counts.deletions,
        binary: s.binary,
      };
    });
  }
  if (sections.length !== numstat.length) {
    throw new SyntaxError(`git: ${numstat.length} numstat lines but ${sections.length} patch sections`);
  }
  return sections.map((s, i) => {
    const n = numstat[i]!;
    return {
      path: s.path,
      previousPath: s.previousPath,
      status: s.status,
      additions: n.additions,
      deletions: n.deletions,
      binary: s.binary || n.binary,
    };
  });
}

/** Added and removed lines of one file section (every line after its first `@@` is a hunk line). */
export function countHunkLines(section: string): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  const first = section.indexOf('\n@@');
  if (first < 0) return { additions, deletions };
  let at = first + 1;
  while (at < section.length) {
    const end = section.indexOf('\n', at);
    const c = section.charCodeAt(at);
    if (c === 43)
      additions += 1; // '+'
    else if (c === 45) deletions += 1; // '-'
    if (end < 0) break;
    at = end + 1;
  }
  return { additions, deletions };
}

/** One entry of `git ls-tree -z` (`<mode> <type> <oid>\t<path>`), or `-l` with the size. */
export interface TreeEntry {
  readonly mode: string;
  readonly type: 'blob' | 'tree' | 'commit';
  readonly oid: string;
  readonly size: number | null;
  readonly path: string;
}

export function parseLsTree(output: string): TreeEntry[] {
  const entries: TreeEntry[] = [];
  for (const record of output.split('\0')) {
    if (record === '') continue;
    const tab = record.indexOf('\t');
    if (tab < 0) throw new SyntaxError(`git: malformed ls-tree entry: ${JSON.stringify(record.slice(0, 200))}`);
    const fields = record.slice(0, tab).trim().split(/\s+/);
    const [mode, type, oid, size] = fields as [string, string, string, string | undefined];
    if (type !== 'blob' && type !== 'tree' && type !== 'commit') throw new SyntaxError(`git: unknown object type ${type}`);
    entries.push({ mode, type, oid, size: size === undefined || size === '-' ? null : Number(size), path: record.slice(tab + 1) });
  }
  return entries;
}

/** The file name of an asv config, as asv itself accepts it. */
export const ASV_CONFIG_RE = /(^|\/)asv\.conf\.jsonc?$/;

/**
 * The asv config among a tree's paths: the shallowest one (the repository root first, then
 * `benchmarks/` and the like), `.json` before `.jsonc`, then by name. Null when there is none.
 */
export function pickAsvConfigPath(paths: Iterable<string>): string | null {
  const found = [...paths].filter((p) => ASV_CONFIG_RE.test(p));
  if (found.length === 0) return null;
  found.sort((a, b) => depth(a) - depth(b) || a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  return found[0]!;
}

function depth(path: string): number {
  return path.split('/').length;
}

/** One `git cat-file --batch` answer: the header line tells how many bytes follow. */
export interface CatFileObject {
  readonly request: string;
  readonly oid: string | null;
  readonly type: string | null;
  /** Null when the object is missing. */
  readonly content: Buffer | null;
}

/** Parses the complete output of `git cat-file --batch` for the given requests (in order). */
export function parseCatFileBatch(output: Buffer, requests: readonly string[]): CatFileObject[] {
  const out: CatFileObject[] = [];
  let at = 0;
  for (const request of requests) {
    const nl = output.indexOf(10, at);
    if (nl < 0) throw new SyntaxError('git: cat-file output ended early');
    const header = output.subarray(at, nl).toString('utf8');
    at = nl + 1;
    if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
      out.push({ request, oid: null, type: null, content: null });
      continue;
    }
    const [oid, type, size] = header.split(' ') as [string, string, string];
    const n = Number(size);
    if (!Number.isInteger(n)) throw new SyntaxError(`git: malformed cat-file header ${JSON.stringify(header)}`);
    out.push({ request, oid, type, content: output.subarray(at, at + n) });
    at += n + 1;
  }
  return out;
}

// ---- patches whose bytes are not UTF-8 --------------------------------------------------------

const DIFF_HEADER = Buffer.from('diff --git ');

/** A file section of raw `git log -p` output: its bytes, and which record (commit) it belongs to. */
export interface SectionRange {
  /** Index of the commit's record in the output, from 0. */
  readonly record: number;
  readonly start: number;
  readonly end: number;
}

/**
 * Byte ranges of the file sections (`diff --git ...` up to the next section or the end of the
 * commit's body) in raw `git log --format=<logFormat(marker)> -p` output. Only bodies are
 * searched: a message line that reads like a diff header is not a section.
 */
export function patchSectionRanges(out: Buffer, marker: string): SectionRange[] {
  const separator = Buffer.from(`\0${marker}`);
  const ranges: SectionRange[] = [];
  let record = -1;
  for (let at = out.indexOf(separator); at >= 0;) {
    const next = out.indexOf(separator, at + separator.length);
    const tag = out[at + separator.length];
    if (tag === 0x48)
      record += 1; // 'H': a header
    else if (tag === 0x42 && record >= 0) {
      // 'B': a body, up to the next record
      const bodyStart = at + separator.length + 1;
      const bodyEnd = next < 0 ? out.length : next;
      const starts: number[] = [];
      for (let s = out.indexOf(DIFF_HEADER, bodyStart); s >= 0 && s < bodyEnd; s = out.indexOf(DIFF_HEADER, s + 1)) {
        if (s === bodyStart || out[s - 1] === 10) starts.push(s);
      }
      starts.forEach((start, i) => ranges.push({ record, start, end: Math.min(starts[i + 1] ?? bodyEnd, bodyEnd) }));
    }
    at = next;
  }
  return ranges;
}

/** The blobs a section's `index <old>..<new>` line names (full ids; all zeros: no such side). */
export function sectionBlobs(section: string): { old: string | null; new: string | null } | null {
  const m = /^index ([0-9a-f]{40,64})\.\.([0-9a-f]{40,64})(?: \d+)?$/m.exec(section);
  if (!m) return null;
  const side = (sha: string) => (/^0+$/.test(sha) ? null : sha);
  return { old: side(m[1]!), new: side(m[2]!) };
}

const EN85 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~';

/** git's base85 (encode_85): big-endian groups of 4 bytes, the last one zero-padded, 5 characters each. */
export function encodeBase85(data: Uint8Array): string {
  let out = '';
  for (let i = 0; i < data.length; i += 4) {
    let acc = 0;
    for (let k = 0; k < 4; k++) acc = acc * 256 + (data[i + k] ?? 0);
    const group: string[] = [];
    for (let k = 0; k < 5; k++) {
      group.unshift(EN85[acc % 85]!);
      acc = Math.floor(acc / 85);
    }
    out += group.join('');
  }
  return out;
}

/** One `literal` hunk of a git binary patch: the zlib-deflated content, 52 bytes per base85 line. */
function literalHunk(content: Uint8Array): string {
  const deflated = deflateSync(content);
  const lines: string[] = [];
  for (let i = 0; i < deflated.length; i += 52) {
    const chunk = deflated.subarray(i, i + 52);
    const n = chunk.length;
    lines.push(`${String.fromCharCode(n <= 26 ? 64 + n : 70 + n)}${encodeBase85(chunk)}`);
  }
  return `literal ${content.length}\n${lines.join('\n')}\n\n`;
}

/**
 * A text section rewritten as git writes a binary one (`GIT binary patch`, a forward and a
 * reverse literal hunk), keeping its header up to the `index` line: what `git apply` needs to
 * reproduce the new content byte for byte. `section` is the header decoded as Latin-1 (paths are
 * quoted ASCII); `oldContent`/`newContent` are the blobs (empty for an added or removed side).
 */
export function binarySection(section: string, oldContent: Uint8Array, newContent: Uint8Array): string {
  const lines = section.split('\n');
  const header: string[] = [];
  for (const line of lines) {
    if (
      line.startsWith('--- ') ||
      line.startsWith('+++ ') ||
      line.startsWith('@@') ||
      line.startsWith('Binary files ') ||
      line === 'GIT binary patch'
    )
      break;
    header.push(line);
  }
  while (header.length > 0 && header.at(-1) === '') header.pop();
  return `${header.join('\n')}\nGIT binary patch\n${literalHunk(newContent)}${literalHunk(oldContent)}`;
}
