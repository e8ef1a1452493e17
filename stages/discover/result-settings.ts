import type { Config } from '../../pipeline/config/schema.js';

/**
 * The settings that change the record of a repository found through the API (`via` bigquery,
 * code-search, list or cli): the four repository filters. They are the `rules` of the item's
 * input, whose hash decides whether a done item runs again.
 *
 * Left out: where candidates come from (`discover.source`, `listFile`, `codeSearch.*`,
 * `bigquery.*`) decides which items are planned, not what an item's record is; GitHub's address,
 * tokens, retries and rate limits decide only how it is fetched. Pure (test/run/input-hashes.test.ts).
 */
export function discoverResultSettings(config: Config): {
  minStars: number;
  maxInactiveYears: number;
  minPython: string;
  requireAsvConfig: boolean;
} {
  const d = config.discover;
  return { minStars: d.minStars, maxInactiveYears: d.maxInactiveYears, minPython: d.minPython, requireAsvConfig: d.requireAsvConfig };
}

/**
 * The settings that change the record of a local clone (`--source git:PATH`): nothing is
 * filtered, but `minPython` decides which line of the project's metadata is recorded as its
 * Python support. Pure.
 */
export function cloneResultSettings(config: Config): { minPython: string } {
  return { minPython: config.discover.minPython };
}
