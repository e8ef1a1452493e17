import type { Config } from '../../pipeline/config/schema.js';

/**
 * The settings that change a pull request's record fetched from the GitHub API: whether its
 * comments are fetched and how many linked issues. They are the `settings` of the item's input,
 * whose hash decides whether a done item is fetched again.
 *
 * Left out: `listPerPage` (how the list is paged), GitHub's address, tokens, retries and rate
 * limits (how requests are made). A clone's items (`--source git:PATH`) depend on no setting:
 * git has neither comments nor linked issues, and `gitTimeoutMs`, `gitBatchSize` and
 * `gitWindowSlackDays` decide how the history is read and which items are planned, not what an
 * item's record is. Pure (test/run/input-hashes.test.ts).
 */
export function collectResultSettings(config: Config): { comments: boolean; maxLinkedIssues: number } {
  return { comments: config.collect.comments, maxLinkedIssues: config.collect.maxLinkedIssues };
}
