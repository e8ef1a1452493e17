import { z } from 'zod';

/**
 * The input of one collect item: everything its result depends on, so that an unchanged pull
 * request is never fetched again (the runner compares the input's hash).
 */
export const githubItemInputSchema = z.object({
  source: z.literal('github'),
  repo: z.string(),
  number: z.number().int().positive(),
  defaultBranch: z.string(),
  /** GitHub bumps updated_at on any change (new comment, label, edit). */
  updatedAt: z.string(),
  headSha: z.string(),
  mergeSha: z.string(),
  mergedAt: z.string(),
  /** What of the configuration changes the record (result-settings.ts). */
  settings: z.object({ comments: z.boolean(), maxLinkedIssues: z.number().int().nonnegative() }),
});

export const gitItemInputSchema = z.object({
  source: z.literal('git'),
  /** The clone. */
  path: z.string(),
  repo: z.string(),
  number: z.number().int().positive(),
  kind: z.enum(['merge', 'squash']),
  defaultBranch: z.string(),
  mergeSha: z.string(),
  baseSha: z.string(),
  headSha: z.string().nullable(),
  mergedAt: z.string(),
  createdAt: z.string(),
  createdFromBranch: z.boolean(),
  /** The clone's origin URL (for the PR URL), when it has one. */
  remote: z.string().nullable(),
});

/** A repository whose pull requests could not be listed: recorded under its `owner/name`. */
export const problemItemInputSchema = z.object({
  source: z.literal('problem'),
  repo: z.string(),
  reason: z.string(),
  message: z.string(),
  status: z.number().int().nullable(),
  /** The window it was listed for (so that each window records its own attempt). */
  window: z.string(),
});

export const collectInputSchema = z.discriminatedUnion('source', [githubItemInputSchema, gitItemInputSchema, problemItemInputSchema]);
export type GitHubItemInput = z.infer<typeof githubItemInputSchema>;
export type GitItemInput = z.infer<typeof gitItemInputSchema>;
export type ProblemItemInput = z.infer<typeof problemItemInputSchema>;
export type CollectInput = z.infer<typeof collectInputSchema>;
