import { z } from 'zod';

/**
 * The parts of GitHub's REST responses that perfmine reads, validated at the edge. Unknown keys
 * are dropped; a missing or mistyped field is a `github-bad-response` error, never a crash later.
 */
const user = z.object({ login: z.string() }).nullable();
const label = z.union([z.string(), z.object({ name: z.string().nullable().optional() })]);

export const ghRepositorySchema = z.object({
  id: z.number().int(),
  full_name: z.string(),
  fork: z.boolean(),
  archived: z.boolean().default(false),
  disabled: z.boolean().default(false),
  stargazers_count: z.number().int(),
  forks_count: z.number().int().default(0),
  default_branch: z.string(),
  pushed_at: z.string().nullable(),
  updated_at: z.string().nullable().optional(),
  language: z.string().nullable().optional(),
});
export type GhRepository = z.infer<typeof ghRepositorySchema>;

export const ghPullListItemSchema = z.object({
  number: z.number().int().positive(),
  state: z.string(),
  updated_at: z.string(),
  merged_at: z.string().nullable(),
  merge_commit_sha: z.string().nullable(),
  head: z.object({ sha: z.string() }),
  base: z.object({ ref: z.string() }),
});
export type GhPullListItem = z.infer<typeof ghPullListItemSchema>;
export const ghPullListSchema = z.array(ghPullListItemSchema);

export const ghPullSchema = z.object({
  number: z.number().int().positive(),
  html_url: z.string().nullable().optional(),
  state: z.string(),
  title: z.string(),
  body: z.string().nullable(),
  user,
  author_association: z.string().nullable().optional(),
  labels: z.array(label).default([]),
  created_at: z.string(),
  updated_at: z.string(),
  merged_at: z.string().nullable(),
  merged: z.boolean().optional(),
  merge_commit_sha: z.string().nullable(),
  head: z.object({ sha: z.string(), ref: z.string().optional() }),
  base: z.object({ ref: z.string(), sha: z.string() }),
  comments: z.number().int().nonnegative().default(0),
  review_comments: z.number().int().nonnegative().default(0),
  additions: z.number().int().nonnegative().default(0),
  deletions: z.number().int().nonnegative().default(0),
  changed_files: z.number().int().nonnegative().default(0),
});
export type GhPull = z.infer<typeof ghPullSchema>;

export const ghPullFileSchema = z.object({
  filename: z.string(),
  previous_filename: z.string().optional(),
  status: z.enum(['added', 'removed', 'modified', 'renamed', 'copied', 'changed', 'unchanged']),
  additions: z.number().int().nonnegative(),
  deletions: z.number().int().nonnegative(),
  patch: z.string().optional(),
});
export type GhPullFile = z.infer<typeof ghPullFileSchema>;
export const ghPullFilesSchema = z.array(ghPullFileSchema);

export const ghCommentSchema = z.object({
  user,
  author_association: z.string().nullable().optional(),
  body: z.string().nullable().default(''),
  created_at: z.string(),
  path: z.string().nullable().optional(),
});
export type GhComment = z.infer<typeof ghCommentSchema>;
export const ghCommentsSchema = z.array(ghCommentSchema);

export const ghIssueSchema = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  body: z.string().nullable(),
  state: z.string().nullable().optional(),
  user,
  labels: z.array(label).default([]),
  created_at: z.string(),
  comments: z.number().int().nonnegative().default(0),
  /** Present when the "issue" is a pull request. */
  pull_request: z.unknown().optional(),
  repository_url: z.string().optional(),
});
export type GhIssue = z.infer<typeof ghIssueSchema>;

export const ghGitCommitSchema = z.object({
  sha: z.string(),
  parents: z.array(z.object({ sha: z.string() })),
  author: z.object({ date: z.string() }).nullable().optional(),
  committer: z.object({ date: z.string() }).nullable().optional(),
  message: z.string().optional(),
});
export type GhGitCommit = z.infer<typeof ghGitCommitSchema>;

export const ghTreeSchema = z.object({
  sha: z.string(),
  truncated: z.boolean(),
  tree: z.array(
    z.object({
      path: z.string(),
      type: z.string(),
      sha: z.string().nullable().optional(),
      size: z.number().int().optional(),
    }),
  ),
});
export type GhTree = z.infer<typeof ghTreeSchema>;

export const ghContentFileSchema = z.object({
  type: z.literal('file'),
  path: z.string(),
  sha: z.string(),
  size: z.number().int(),
  encoding: z.string().optional(),
  content: z.string().optional(),
});
export type GhContentFile = z.infer<typeof ghContentFileSchema>;

export const ghBlobSchema = z.object({
  sha: z.string(),
  size: z.number().int(),
  encoding: z.string(),
  content: z.string(),
});

export const ghCodeSearchSchema = z.object({
  total_count: z.number().int().nonnegative(),
  incomplete_results: z.boolean(),
  items: z.array(
    z.object({
      name: z.string(),
      path: z.string(),
      repository: z.object({ full_name: z.string(), fork: z.boolean().optional() }),
    }),
  ),
});
export type GhCodeSearch = z.infer<typeof ghCodeSearchSchema>;

/** Label objects or names → names. */
export function labelNames(labels: readonly z.infer<typeof label>[]): string[] {
  return labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter((n) => n !== '');
}
