import { z } from 'zod';

/** Configuration of the discover stage (the `discover` key of perfmine.config.json). */
export const discoverConfig = z
  .object({
    /** Where candidate repositories come from (`--repo` and `--source git:PATH` override it). */
    source: z.enum(['code-search', 'bigquery', 'list']).default('code-search'),
    /** For `source: list`: one `owner/name` a line, or a TSV with a `repo` column. */
    listFile: z.string().min(1).optional(),
    /** Repository filters; each rejection is recorded with its reason. */
    minStars: z.number().int().nonnegative().default(100),
    /** Dropped when nothing was pushed for this long before the window's end. */
    maxInactiveYears: z.number().positive().default(3),
    /** Dropped when requires-python / classifiers show no support for this version or later. */
    minPython: z
      .string()
      .regex(/^3\.\d+$/, 'expected 3.N')
      .default('3.8'),
    /** Drop repositories without asv.conf.json(c) in their default branch. */
    requireAsvConfig: z.boolean().default(true),
    codeSearch: z
      .object({
        /** File names searched (`filename:` qualifier), one query family each. */
        filenames: z.array(z.string().min(1)).min(1).default(['asv.conf.json', 'asv.conf.jsonc']),
        /** Upper bound of the size shards, bytes (GitHub indexes files under 384 KB). */
        maxFileSize: z.number().int().positive().default(393_216),
        /** Results GitHub returns per query; a shard with more is split by size. */
        resultCap: z.number().int().positive().default(1000),
        perPage: z.number().int().min(1).max(100).default(100),
        /** Minimum time between two search requests (GitHub: about 10 code searches a minute). */
        intervalMs: z.number().int().nonnegative().default(6_000),
      })
      .strict()
      .prefault({}),
    bigquery: z
      .object({
        /** GitHub's public dataset: file paths at the head of each repository's default branch. */
        filesTable: z
          .string()
          .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_]+\.[A-Za-z0-9_]+$/)
          .default('bigquery-public-data.github_repos.files'),
        /** Language statistics, to keep Python repositories only (null: no language filter). */
        languagesTable: z
          .string()
          .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_]+\.[A-Za-z0-9_]+$/)
          .nullable()
          .default('bigquery-public-data.github_repos.languages'),
        location: z.string().min(1).default('US'),
        maxRows: z.number().int().positive().default(100_000),
        /** Refuse to run a query that would bill more than this (bytes); null: no cap. */
        maxBytesBilled: z.number().int().positive().nullable().default(200_000_000_000),
        timeoutMs: z.number().int().positive().default(300_000),
      })
      .strict()
      .prefault({}),
  })
  .strict();
export type DiscoverConfig = z.infer<typeof discoverConfig>;
