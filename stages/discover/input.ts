import { z } from 'zod';

/** The input of one discover item (its hash decides whether the repository is enriched again). */
export const githubDiscoverInputSchema = z.object({
  via: z.enum(['bigquery', 'code-search', 'list', 'cli']),
  name: z.string(),
  asvConfigPath: z.string().nullable(),
  /** The window's end: activity is judged against it, and each month looks again. */
  asOf: z.string(),
  /** The configuration's repository filters (result-settings.ts). */
  rules: z.object({
    minStars: z.number(),
    maxInactiveYears: z.number(),
    minPython: z.string(),
    requireAsvConfig: z.boolean(),
  }),
});

export const gitDiscoverInputSchema = z.object({
  via: z.literal('git'),
  name: z.string(),
  path: z.string(),
  defaultBranch: z.string(),
  /** The branch tip: a new commit makes the clone's record be read again. */
  tip: z.string(),
  /** What of the configuration changes the record (result-settings.ts). */
  settings: z.object({ minPython: z.string() }),
});

export const discoverInputSchema = z.union([githubDiscoverInputSchema, gitDiscoverInputSchema]);
export type GitHubDiscoverInput = z.infer<typeof githubDiscoverInputSchema>;
export type GitDiscoverInput = z.infer<typeof gitDiscoverInputSchema>;
export type DiscoverInput = z.infer<typeof discoverInputSchema>;
