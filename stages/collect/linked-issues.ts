/**
 * Finds the issues a pull request links to, in its title and body: `#12`, `owner/repo#12`,
 * `https://github.com/owner/repo/issues/12`, and closing keywords (`fixes #12`, `Closes
 * owner/repo#3`, `resolves https://github.com/.../issues/4`). Pure.
 */
import type { Comment, LinkedIssue } from '../../pipeline/concepts/records/pull-request.js';

export type LinkVia = LinkedIssue['via'];

export interface IssueRef {
  /** `owner/name`, as written (GitHub names are case-insensitive). */
  readonly repo: string;
  readonly number: number;
  readonly via: LinkVia;
}

const NAME = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\\/[A-Za-z0-9_.-]{1,100}';
const KEYWORDS = '(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)';
const TARGET = `(?:https?:\\/\\/github\\.com\\/(${NAME})\\/issues\\/(\\d{1,9})|(${NAME})#(\\d{1,9})|#(\\d{1,9}))`;
const CLOSING_RE = new RegExp(`(?<![\\w-])${KEYWORDS}:?\\s+${TARGET}(?![\\w/])`, 'gi');
const URL_RE = new RegExp(`https?:\\/\\/github\\.com\\/(${NAME})\\/issues\\/(\\d{1,9})(?![\\d])`, 'gi');
const CROSS_RE = new RegExp(`(?<![\\w/.@-])(${NAME})#(\\d{1,9})(?![\\w])`, 'g');
const LOCAL_RE = /(?<![\w/&#@-])#(\d{1,9})(?![\w])/g;

/** Priority when one issue is linked in several ways: the strongest way is kept. */
const STRENGTH: Record<LinkVia, number> = { 'closing-keyword': 4, url: 3, 'cross-repo': 2, reference: 1 };

/** Removes fenced code blocks and inline code spans, where `#12` is rarely a link. */
export function stripCode(text: string): string {
  return text
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/~~~[\s\S]*?~~~/g, ' ')
    .replace(/`[^`\n]*`/g, ' ');
}

/**
 * The issue references of a text, in order of first appearance, each once (strongest link
 * kind kept), never the pull request itself.
 */
export function findIssueRefs(text: string, repo: string, self?: number): IssueRef[] {
  const clean = stripCode(text);
  const found = new Map<string, { ref: IssueRef; at: number }>();
  const add = (owner: string | undefined, number: string, via: LinkVia, at: number) => {
    const target = owner ?? repo;
    const n = Number(number);
    if (!Number.isSafeInteger(n) || n <= 0) return;
    const sameRepo = target.toLowerCase() === repo.toLowerCase();
    if (sameRepo && n === self) return;
    const kind: LinkVia = via === 'cross-repo' && sameRepo ? 'reference' : via;
    const key = `${target.toLowerCase()}#${n}`;
    const prev = found.get(key);
    if (!prev) found.set(key, { ref: { repo: sameRepo ? repo : target, number: n, via: kind }, at });
    else if (STRENGTH[kind] > STRENGTH[prev.ref.via]) found.set(key, { ref: { ...prev.ref, via: kind }, at: Math.min(prev.at, at) });
  };
  for (const m of clean.matchAll(CLOSING_RE)) {
    if (m[1] && m[2]) add(m[1], m[2], 'closing-keyword', m.index);
    else if (m[3] && m[4]) add(m[3], m[4], 'closing-keyword', m.index);
    else if (m[5]) add(undefined, m[5], 'closing-keyword', m.index);
  }
  for (const m of clean.matchAll(URL_RE)) add(m[1], m[2]!, 'url', m.index);
  for (const m of clean.matchAll(CROSS_RE)) add(m[1], m[2]!, 'cross-repo', m.index);
  for (const m of clean.matchAll(LOCAL_RE)) add(undefined, m[1]!, 'reference', m.index);
  return [...found.values()].sort((a, b) => STRENGTH[b.ref.via] - STRENGTH[a.ref.via] || a.at - b.at).map((x) => x.ref);
}

/** Whether something created at `createdAt` existed before the pull request was opened. */
export function createdBefore(createdAt: string, prCreatedAt: string): boolean {
  return Date.parse(createdAt) < Date.parse(prCreatedAt);
}

/** Comments written before the pull request was opened (the problem statement must not see the future). */
export function commentsBefore(comments: readonly Comment[], prCreatedAt: string): Comment[] {
  return comments.filter((c) => createdBefore(c.createdAt, prCreatedAt));
}
