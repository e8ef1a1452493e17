/**
 * Pull requests read from a clone's history (pure): on the default branch's first-parent line,
 * `Merge pull request #N from user/branch` merge commits and `Title (#N)` squash commits are
 * pull requests. Base = first parent; merged_at = committer date; created_at = author date of
 * the PR's first commit when the history has it (merge PRs), else the commit's author date.
 */
import type { CommitHeader, LogCommit } from '../../pipeline/services/git-parse.js';
import { inWindow, type Window } from '../../pipeline/window.js';
import type { AsvConfigFile } from '../../cache/asv-configs.js';
import type { PullRequest } from '../../pipeline/concepts/records/pull-request.js';

export type PrSubject =
  | { readonly kind: 'merge'; readonly number: number; readonly from: string }
  | { readonly kind: 'squash'; readonly number: number; readonly title: string };

// A pull request's number is positive (and well inside a safe integer): `#0` names none.
const MERGE_RE = /^Merge pull request #([1-9]\d{0,9}) from (\S+)/;
const SQUASH_RE = /^(.*\S)\s+\(#([1-9]\d{0,9})\)$/;

/** What a first-line commit message says about a pull request, if anything. */
export function parsePrSubject(subject: string): PrSubject | null {
  const line = subject.split('\n', 1)[0]!.trim();
  const merge = MERGE_RE.exec(line);
  if (merge) return { kind: 'merge', number: Number(merge[1]), from: merge[2]! };
  const squash = SQUASH_RE.exec(line);
  if (squash) return { kind: 'squash', number: Number(squash[2]), title: squash[1]! };
  return null;
}

export interface GitPrCandidate {
  readonly number: number;
  readonly kind: 'merge' | 'squash';
  readonly mergeSha: string;
  readonly baseSha: string;
  readonly headSha: string | null;
  readonly mergedAt: string;
  readonly createdAt: string;
  /** Whether createdAt is the first PR commit's author date (else the merge/squash commit's). */
  readonly createdFromBranch: boolean;
}

/** The first-parent line from `tip`, newest first. */
export function mainline(commits: ReadonlyMap<string, CommitHeader>, tip: string): CommitHeader[] {
  const line: CommitHeader[] = [];
  let at = commits.get(tip);
  const seen = new Set<string>();
  while (at && !seen.has(at.sha)) {
    seen.add(at.sha);
    line.push(at);
    const parent = at.parents[0];
    at = parent === undefined ? undefined : commits.get(parent);
  }
  return line;
}

/**
 * Earliest author date of the commits each mainline merge brought in (`first-parent..merge`),
 * by merge SHA. Each side commit belongs to the oldest mainline merge that reaches it, which
 * is exactly `git log M^1..M` for every merge M, computed in one pass over the graph.
 */
export function branchStartDates(commits: ReadonlyMap<string, CommitHeader>, line: readonly CommitHeader[]): Map<string, string> {
  const onLine = new Set(line.map((c) => c.sha));
  const claimed = new Set<string>();
  const out = new Map<string, string>();
  for (let i = line.length - 1; i >= 0; i--) {
    const merge = line[i]!;
    if (merge.parents.length < 2) continue;
    let earliest: string | null = null;
    const stack = merge.parents.slice(1);
    while (stack.length > 0) {
      const sha = stack.pop()!;
      if (onLine.has(sha) || claimed.has(sha)) continue;
      const c = commits.get(sha);
      if (!c) continue;
      claimed.add(sha);
      if (earliest === null || c.authorDate < earliest) earliest = c.authorDate;
      stack.push(...c.parents);
    }
    if (earliest !== null) out.set(merge.sha, earliest);
  }
  return out;
}

export interface GitPullRequests {
  readonly pulls: GitPrCandidate[];
  /** PR commits of the window whose first parent is not in the clone (a shallow clone's edge). */
  readonly withoutBase: number[];
}

/** What the window's part of a history is read as. */
export interface HistoryWindow {
  /** The first-parent line from the tip, newest first; it may stop anywhere past the window's start. */
  readonly line: readonly CommitHeader[];
  /** Commits by SHA: the line's, and at least every commit the window's merges brought in. */
  readonly commits: ReadonlyMap<string, CommitHeader>;
  /** Whether a commit is in the clone (a base may not have been read). */
  readonly present: (sha: string) => boolean;
}

/**
 * The pull requests merged into the branch at `tip` with merged_at in the window, newest first;
 * a number seen twice (a revert and a reland) keeps its most recent commit. `graph` is the
 * whole history reachable from the tip.
 */
export function findGitPullRequests(graph: readonly CommitHeader[], tip: string, window: Window): GitPullRequests {
  const commits = new Map(graph.map((c) => [c.sha, c]));
  return pullRequestsInWindow({ line: mainline(commits, tip), commits, present: (sha) => commits.has(sha) }, window);
}

/**
 * The window's PR commits on the line (merge and squash subjects, committer date in the
 * window): the newest and the oldest, or null when there is none. What is read beyond the line
 * is the history between them: `git log newest ^(first parent of oldest)`.
 */
export function windowSpan(line: readonly CommitHeader[], window: Window): { newest: CommitHeader; oldest: CommitHeader } | null {
  let newest: CommitHeader | null = null;
  let oldest: CommitHeader | null = null;
  for (const c of line) {
    if (!inWindow(window, c.committerDate) || !parsePrSubject(c.message)) continue;
    newest ??= c;
    oldest = c;
  }
  return newest && oldest ? { newest, oldest } : null;
}

/**
 * `findGitPullRequests` over the part of a history that a window needs: the first-parent line
 * down to the window's start, and the commits reachable from the window's newest PR commit but
 * not from the first parent of its oldest. A side commit belongs to the oldest mainline merge
 * that reaches it; the commits that older merges brought in are exactly those reachable from that
 * first parent, so each merge of the window is dated as from the whole history.
 */
export function pullRequestsInWindow(history: HistoryWindow, window: Window): GitPullRequests {
  const { line, commits } = history;
  const starts = branchStartDates(commits, line);
  const out: GitPrCandidate[] = [];
  const withoutBase: number[] = [];
  const numbers = new Set<number>();
  for (const c of line) {
    if (!inWindow(window, c.committerDate)) continue;
    const subject = parsePrSubject(c.message);
    if (!subject || numbers.has(subject.number)) continue;
    const base = c.parents[0];
    if (base === undefined || !history.present(base)) {
      withoutBase.push(subject.number);
      continue;
    }
    numbers.add(subject.number);
    const isMerge = c.parents.length >= 2;
    const start = isMerge ? starts.get(c.sha) : undefined;
    out.push({
      number: subject.number,
      kind: isMerge ? 'merge' : 'squash',
      mergeSha: c.sha,
      baseSha: base,
      headSha: isMerge ? c.parents[1]! : null,
      mergedAt: c.committerDate,
      createdAt: start ?? c.authorDate,
      createdFromBranch: start !== undefined,
    });
  }
  return { pulls: out, withoutBase };
}

/** The PR title a commit message carries: a merge's second paragraph, a squash's subject without `(#N)`. */
export function titleFromMessage(message: string): string {
  const subject = parsePrSubject(message);
  const lines = message.split('\n');
  if (subject?.kind === 'squash') return subject.title;
  if (subject?.kind === 'merge') {
    const title = lines.slice(1).find((l) => l.trim() !== '');
    return title?.trim() ?? subject.from.replace(/^[^/]+\//, '');
  }
  return lines[0] ?? '';
}

/**
 * The branch a merge commit's message names (`Merge pull request #N from owner/branch-name` →
 * `branch-name`; GitHub's `head.ref`, which may itself hold `/`), or null (a squash commit names none).
 */
export function headRefFromMessage(message: string): string | null {
  const subject = parsePrSubject(message);
  if (subject?.kind !== 'merge') return null;
  const slash = subject.from.indexOf('/');
  const ref = slash < 0 ? subject.from : subject.from.slice(slash + 1);
  return ref === '' ? null : ref;
}

/** Trailer lines git and GitHub append to a commit message (who, not what): never part of a body. */
const TRAILER = /^(?:Co-authored-by|Signed-off-by|Reviewed-by|Acked-by|Tested-by|Reported-by|Suggested-by|Helped-by|Change-Id)\s*:/i;
/** GitHub's separator between a squash's list of commits and the co-authors it gathered. */
const SEPARATOR = /^-{3,}\s*$/;

/**
 * The body a merge or squash commit's message carries, or null when it carries none. A squash
 * commit's body is what follows its subject: GitHub writes there the list of the pull request's
 * commits (`* perf: short-circuit ...`), a single commit's own body, or the pull request's
 * description, as the repository is set. A merge commit's is what follows the title paragraph
 * under `Merge pull request #N from ...` (GitHub writes the description there when the repository
 * asks for it). Trailers (`Co-authored-by:`, `Signed-off-by:` ...) and the `---------` line
 * GitHub puts before them are left out: they name people, not the change.
 */
export function bodyFromMessage(message: string): { readonly body: string; readonly source: 'squash-commit' | 'merge-commit' } | null {
  const subject = parsePrSubject(message);
  if (!subject) return null;
  const lines = message.replace(/\r\n?/g, '\n').split('\n').slice(1);
  let rest: string[];
  if (subject.kind === 'merge') {
    const title = lines.findIndex((l) => l.trim() !== '');
    if (title < 0) return null;
    // the title paragraph: GitHub writes the pull request's title there, on one line
    let end = title;
    while (end < lines.length && lines[end]!.trim() !== '') end += 1;
    rest = lines.slice(end);
  } else {
    rest = lines;
  }
  const kept = rest.filter((l) => !TRAILER.test(l.trim()) && !SEPARATOR.test(l));
  const body = kept
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return body === '' ? null : { body, source: subject.kind === 'merge' ? 'merge-commit' : 'squash-commit' };
}

/** `https://github.com/o/r/pull/N` when the clone's remote is GitHub. */
export function pullUrl(remote: string | null, repo: string, number: number): string | null {
  if (!remote || !/github\.com[:/]/i.test(remote)) return null;
  return `https://github.com/${repo}/pull/${number}`;
}

/** Fields the git source never has. */
export const GIT_MISSING = ['body', 'labels', 'author', 'authorAssociation', 'comments', 'linkedIssues'] as const;

export interface GitRecordInput {
  readonly repo: string;
  readonly defaultBranch: string;
  readonly candidate: GitPrCandidate;
  /** The merge/squash commit with its files and patch against the first parent. */
  readonly commit: LogCommit;
  readonly asvConfig: AsvConfigFile | null;
  readonly url: string | null;
}

/** The collected record of a pull request found in git. */
export function buildGitPullRequest(input: GitRecordInput): PullRequest {
  const { candidate: c, commit } = input;
  const fromCommit = bodyFromMessage(commit.message);
  // The body read from the commit stands for the pull request's, named by `bodySource`; only
  // when the commit has none is the body missing.
  const missing: string[] = GIT_MISSING.filter((f) => f !== 'body' || fromCommit === null);
  if (input.url === null) missing.push('url');
  if (c.headSha === null) missing.push('headSha');
  const headRef = headRefFromMessage(commit.message);
  if (headRef === null) missing.push('headRef');
  // Some text is not UTF-8: its changes are in the diff as binary patches (exact, not readable).
  if ((commit.bytePatches ?? []).length > 0) missing.push('diff.bytes');
  return {
    repo: input.repo,
    number: c.number,
    url: input.url,
    title: titleFromMessage(commit.message),
    body: fromCommit?.body ?? '',
    ...(fromCommit ? { bodySource: fromCommit.source } : {}),
    labels: [],
    author: null,
    authorAssociation: null,
    createdAt: c.createdAt,
    mergedAt: c.mergedAt,
    baseRef: input.defaultBranch,
    defaultBranch: input.defaultBranch,
    mergedIntoDefault: true,
    baseSha: c.baseSha,
    mergeSha: c.mergeSha,
    headSha: c.headSha,
    headRef,
    files: [...commit.files],
    additions: commit.files.reduce((n, f) => n + f.additions, 0),
    deletions: commit.files.reduce((n, f) => n + f.deletions, 0),
    changedFiles: commit.files.length,
    diff: commit.patch,
    comments: [],
    linkedIssues: [],
    asvConfig: input.asvConfig ? { path: input.asvConfig.path, text: input.asvConfig.text } : null,
    source: 'git',
    missing,
  };
}
