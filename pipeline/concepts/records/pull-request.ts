import { z } from 'zod';

/**
 * The collected pull request: what collect writes and every later stage reads. Sources fill what
 * they can; a field a source cannot provide is left empty and named in `missing` (the git source
 * has no body, labels, comments or linked issues).
 */
export const fileChangeSchema = z.object({
  path: z.string(),
  /** For renames and copies. */
  previousPath: z.string().nullable(),
  status: z.enum(['added', 'modified', 'removed', 'renamed', 'copied', 'changed', 'unchanged']),
  additions: z.number().int().nonnegative(),
  deletions: z.number().int().nonnegative(),
  binary: z.boolean(),
});
export type FileChange = z.infer<typeof fileChangeSchema>;

export const commentSchema = z.object({
  author: z.string().nullable(),
  authorAssociation: z.string().nullable(),
  body: z.string(),
  createdAt: z.string(),
  /** `issue`: conversation comment; `review`: comment on a line of the diff. */
  kind: z.enum(['issue', 'review']),
  path: z.string().nullable(),
});
export type Comment = z.infer<typeof commentSchema>;

export const linkedIssueSchema = z.object({
  repo: z.string(),
  number: z.number().int().positive(),
  title: z.string(),
  body: z.string(),
  state: z.string().nullable(),
  author: z.string().nullable(),
  createdAt: z.string(),
  labels: z.array(z.string()),
  /** Only comments created before the pull request was opened. */
  comments: z.array(commentSchema),
  /** How the link was found: `#12`, `owner/repo#12`, a URL, a closing keyword. */
  via: z.enum(['reference', 'cross-repo', 'url', 'closing-keyword']),
});
export type LinkedIssue = z.infer<typeof linkedIssueSchema>;

export const pullRequestSchema = z.object({
  repo: z.string(),
  number: z.number().int().positive(),
  url: z.string().nullable(),
  title: z.string(),
  body: z.string(),
  /**
   * Where `body` came from: the pull request's own description (GitHub), or, from git, the body
   * of the squash commit (GitHub's list of the pull request's commits, or one commit's message)
   * or of the merge commit (under its title). Absent for GitHub's description and for an empty
   * body. The kinds are kept apart because a commit body describes the commits, not the problem.
   */
  bodySource: z.enum(['squash-commit', 'merge-commit']).optional(),
  labels: z.array(z.string()),
  author: z.string().nullable(),
  authorAssociation: z.string().nullable(),
  createdAt: z.string(),
  mergedAt: z.string(),
  /** The branch it was merged into, and whether that is the repository's default branch. */
  baseRef: z.string(),
  defaultBranch: z.string(),
  mergedIntoDefault: z.boolean(),
  /** The commit the expert patch applies to (first parent of the merge). */
  baseSha: z.string(),
  /** The merge (or squash) commit on the default branch. */
  mergeSha: z.string(),
  headSha: z.string().nullable(),
  /**
   * The name of the branch the pull request came from (GitHub's `head.ref`; from git, the
   * branch a merge commit names, `Merge pull request #N from owner/<branch>`). Null when the
   * source cannot tell (a squash commit); absent in records collected before it was kept.
   */
  headRef: z.string().nullable().optional(),
  files: z.array(fileChangeSchema),
  additions: z.number().int().nonnegative(),
  deletions: z.number().int().nonnegative(),
  changedFiles: z.number().int().nonnegative(),
  /**
   * Unified diff base..merge in git's format, with binary changes in full (`GIT binary patch`,
   * full blob ids), so that it applies with `git apply` (GitHub's placeholders are completed from
   * the files' bytes; see `missing`).
   */
  diff: z.string(),
  comments: z.array(commentSchema),
  linkedIssues: z.array(linkedIssueSchema),
  /** The asv config found in the tree at `baseSha` (asv.conf.json or .jsonc, anywhere), raw text. */
  asvConfig: z.object({ path: z.string(), text: z.string() }).nullable(),
  source: z.enum(['github', 'git']),
  /**
   * Fields this source could not fill (e.g. `body`, `labels`, `comments`, `linkedIssues`), and
   * what the diff lacks: `diff.partial` (some file changes are missing), `diff.bytes` (a file's
   * text is not UTF-8, so its change is held as a git binary patch: exact for `git apply`, but not
   * readable text), `diff.binary` (a binary change GitHub showed only as a placeholder could not be
   * read, so the diff does not apply).
   */
  missing: z.array(z.string()),
});
export type PullRequest = z.infer<typeof pullRequestSchema>;

/** What collect hands on in the ledger (the full record lives in the pull_requests table). */
export const collectOutputSchema = z.object({
  repo: z.string(),
  number: z.number().int().positive(),
  mergedAt: z.string(),
  baseSha: z.string(),
  mergeSha: z.string(),
  /** Hash of the stored record: downstream inputs depend on it. */
  contentHash: z.string(),
});
export type CollectOutput = z.infer<typeof collectOutputSchema>;
