/**
 * Assembly of a pull request record from GitHub's answers (pure): file changes, the diff when
 * GitHub refuses to render it, files beyond GitHub's 3,000-file list, the list-window scan.
 */
import type { AsvConfigFile } from '../../cache/asv-configs.js';
import {
  labelNames,
  type GhComment,
  type GhIssue,
  type GhPull,
  type GhPullFile,
  type GhPullListItem,
  type GhTree,
} from '../../pipeline/services/github-schemas.js';
import { normalizeInstant, type Window } from '../../pipeline/window.js';
import { commentsBefore, createdBefore, type IssueRef } from './linked-issues.js';
import type { Comment, FileChange, LinkedIssue, PullRequest } from '../../pipeline/concepts/records/pull-request.js';

/** GitHub lists at most this many files of a pull request. */
export const GITHUB_FILES_CAP = 3000;

export function toFileChange(f: GhPullFile): FileChange {
  return {
    path: f.filename,
    previousPath: f.previous_filename ?? null,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    // GitHub has no binary flag: a change without a patch and without line counts is one.
    binary: f.patch === undefined && f.additions + f.deletions === 0 && f.status !== 'renamed' && f.status !== 'removed',
  };
}

export function toComment(c: GhComment, kind: Comment['kind']): Comment {
  return {
    author: c.user?.login ?? null,
    authorAssociation: c.author_association ?? null,
    body: c.body ?? '',
    createdAt: normalizeInstant(c.created_at),
    kind,
    path: kind === 'review' ? (c.path ?? null) : null,
  };
}

/**
 * A git-style diff from the per-file patches of the file list, for when GitHub will not render
 * the diff (too many files or lines). Files GitHub sends without a patch appear as binary;
 * `complete` is false when any text change lacks its patch.
 */
export function assembleDiff(files: readonly GhPullFile[]): { diff: string; complete: boolean } {
  let complete = true;
  const parts: string[] = [];
  for (const f of files) {
    const from = f.previous_filename ?? f.filename;
    const lines = [`diff --git a/${from} b/${f.filename}`];
    if (f.status === 'added') lines.push('new file mode 100644');
    if (f.status === 'removed') lines.push('deleted file mode 100644');
    if (f.status === 'renamed' && f.previous_filename) lines.push(`rename from ${f.previous_filename}`, `rename to ${f.filename}`);
    if (f.patch === undefined) {
      if (f.additions + f.deletions > 0) complete = false;
      if (f.status !== 'renamed' || f.additions + f.deletions > 0)
        lines.push(
          `Binary files ${f.status === 'added' ? '/dev/null' : `a/${from}`} and ${f.status === 'removed' ? '/dev/null' : `b/${f.filename}`} differ`,
        );
    } else {
      lines.push(
        `--- ${f.status === 'added' ? '/dev/null' : `a/${from}`}`,
        `+++ ${f.status === 'removed' ? '/dev/null' : `b/${f.filename}`}`,
        f.patch.replace(/\n$/, ''),
      );
    }
    parts.push(`${lines.join('\n')}\n`);
  }
  return { diff: parts.join(''), complete };
}

/**
 * Files GitHub did not list (past its 3,000-file cap), from the trees of the base and merge
 * commits: paths whose blob differs. Their line counts are unknown (0).
 */
export function filesBeyondList(listed: readonly FileChange[], base: GhTree, merge: GhTree): FileChange[] {
  const known = new Set(listed.flatMap((f) => (f.previousPath ? [f.path, f.previousPath] : [f.path])));
  const blobs = (t: GhTree) => new Map(t.tree.filter((e) => e.type === 'blob').map((e) => [e.path, e.sha ?? '']));
  const before = blobs(base);
  const after = blobs(merge);
  const out: FileChange[] = [];
  for (const [path, sha] of after) {
    if (known.has(path)) continue;
    const old = before.get(path);
    if (old === undefined) out.push({ path, previousPath: null, status: 'added', additions: 0, deletions: 0, binary: false });
    else if (old !== sha) out.push({ path, previousPath: null, status: 'modified', additions: 0, deletions: 0, binary: false });
  }
  for (const path of before.keys()) {
    if (!known.has(path) && !after.has(path))
      out.push({ path, previousPath: null, status: 'removed', additions: 0, deletions: 0, binary: false });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export interface ListScan {
  /** Merged pull requests of the page with merged_at in the window. */
  readonly inWindow: GhPullListItem[];
  /** The list is sorted by updated_at, newest first: once an item is older than the window's start, no later page can hold a PR merged in the window. */
  readonly done: boolean;
}

/** Reads one page of `pulls?state=closed&sort=updated&direction=desc`. */
export function scanPullPage(page: readonly GhPullListItem[], window: Window): ListScan {
  const start = Date.parse(window.start);
  const end = Date.parse(window.end);
  const inWindow = page.filter((p) => {
    if (p.merged_at === null || p.merge_commit_sha === null) return false;
    const t = Date.parse(p.merged_at);
    return t >= start && t < end;
  });
  const last = page.at(-1);
  const done = page.length === 0 || (last !== undefined && Date.parse(last.updated_at) < start);
  return { inWindow, done };
}

/** A linked issue with only what existed before the pull request was opened; null when the issue itself is younger. */
export function toLinkedIssue(ref: IssueRef, issue: GhIssue, comments: readonly GhComment[], prCreatedAt: string): LinkedIssue | null {
  if (!createdBefore(issue.created_at, prCreatedAt)) return null;
  return {
    repo: ref.repo,
    number: issue.number,
    title: issue.title,
    body: issue.body ?? '',
    state: issue.state ?? null,
    author: issue.user?.login ?? null,
    createdAt: normalizeInstant(issue.created_at),
    labels: labelNames(issue.labels),
    comments: commentsBefore(
      comments.map((c) => toComment(c, 'issue')),
      prCreatedAt,
    ),
    via: ref.via,
  };
}

export interface GitHubRecordInput {
  readonly repo: string;
  readonly defaultBranch: string;
  readonly pull: GhPull;
  readonly baseSha: string;
  readonly mergeSha: string;
  readonly files: readonly FileChange[];
  readonly diff: string;
  readonly comments: readonly Comment[];
  readonly linkedIssues: readonly LinkedIssue[];
  readonly asvConfig: AsvConfigFile | null;
  readonly missing: readonly string[];
}

export function buildGitHubPullRequest(input: GitHubRecordInput): PullRequest {
  const p = input.pull;
  const comments = [...input.comments].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.kind.localeCompare(b.kind));
  return {
    repo: input.repo,
    number: p.number,
    url: p.html_url ?? `https://github.com/${input.repo}/pull/${p.number}`,
    title: p.title,
    body: p.body ?? '',
    labels: labelNames(p.labels),
    author: p.user?.login ?? null,
    authorAssociation: p.author_association ?? null,
    createdAt: normalizeInstant(p.created_at),
    mergedAt: normalizeInstant(p.merged_at!),
    baseRef: p.base.ref,
    defaultBranch: input.defaultBranch,
    mergedIntoDefault: p.base.ref === input.defaultBranch,
    baseSha: input.baseSha,
    mergeSha: input.mergeSha,
    headSha: p.head.sha,
    headRef: p.head.ref ?? null,
    files: [...input.files],
    additions: input.files.reduce((n, f) => n + f.additions, 0),
    deletions: input.files.reduce((n, f) => n + f.deletions, 0),
    changedFiles: input.files.length,
    diff: input.diff,
    comments,
    linkedIssues: [...input.linkedIssues],
    asvConfig: input.asvConfig ? { path: input.asvConfig.path, text: input.asvConfig.text } : null,
    source: 'github',
    missing: [...input.missing],
  };
}
