import { z } from 'zod';

/** Configuration of the collect stage (the `collect` key of perfmine.config.json). */
export const collectConfig = z
  .object({
    /** Linked issues fetched per pull request (in order of appearance; closing keywords first). */
    maxLinkedIssues: z.number().int().nonnegative().default(10),
    /** Page size of the pull request list (GitHub's maximum is 100). */
    listPerPage: z.number().int().min(1).max(100).default(100),
    /** Fetch conversation and review comments. */
    comments: z.boolean().default(true),
    /** Longest a single git process may run (the git source reads whole histories). */
    gitTimeoutMs: z.number().int().positive().default(600_000),
    /** Commits the git source holds read ahead of their items, over its `git log` processes (bounds memory). */
    gitBatchSize: z.number().int().positive().default(500),
    /**
     * git processes reading the items' commits at once, each every n-th commit (git's diff is
     * single-threaded), the records still taken in plan order.
     */
    gitStreams: z.number().int().min(1).max(16).default(2),
    /**
     * The git source reads the default branch's first-parent line only down to this many days
     * before the window's start (git stops at the first commit older than that). A mainline whose
     * committer dates go back in time by more than this (history imported from another system)
     * could hide a PR commit of the window below such a commit: raise it for such a clone.
     */
    gitWindowSlackDays: z.number().int().nonnegative().default(30),
  })
  .strict();
export type CollectConfig = z.infer<typeof collectConfig>;
