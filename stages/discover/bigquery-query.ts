/**
 * The BigQuery query over GitHub's public dataset (pure): repositories whose default branch has
 * an asv config (`asv.conf.json` or `asv.conf.jsonc`, anywhere in the tree), Python ones only
 * when a languages table is given, with the shallowest config path.
 */
import { z } from 'zod';
import { dedupeCandidates, REPO_NAME_RE, type RepositoryCandidate } from './candidate.js';

export interface AsvQueryOptions {
  readonly filesTable: string;
  readonly languagesTable: string | null;
  readonly maxRows: number;
}

const TABLE_RE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_]+\.[A-Za-z0-9_]+$/;

/** The asv config file names as a regular expression on the path (RE2 syntax). */
export const ASV_PATH_PATTERN = '(^|/)asv\\.conf\\.jsonc?$';

export function buildAsvQuery(options: AsvQueryOptions): { sql: string; params: Record<string, unknown> } {
  for (const t of [options.filesTable, options.languagesTable]) {
    if (t !== null && !TABLE_RE.test(t)) throw new RangeError(`not a table name: ${t}`);
  }
  const python = options.languagesTable
    ? `
  AND f.repo_name IN (
    SELECT l.repo_name
    FROM \`${options.languagesTable}\` AS l, UNNEST(l.language) AS lang
    WHERE lang.name = 'Python'
  )`
    : '';
  const sql = `-- perfmine discover: repositories with an asv config anywhere in their tree
SELECT
  f.repo_name AS repo_name,
  ARRAY_AGG(f.path ORDER BY ARRAY_LENGTH(SPLIT(f.path, '/')), LENGTH(f.path), f.path LIMIT 1)[OFFSET(0)] AS asv_config_path,
  COUNT(DISTINCT f.path) AS asv_configs
FROM \`${options.filesTable}\` AS f
WHERE REGEXP_CONTAINS(f.path, @asv_path_pattern)${python}
GROUP BY f.repo_name
ORDER BY f.repo_name
LIMIT @max_rows`;
  return { sql, params: { asv_path_pattern: ASV_PATH_PATTERN, max_rows: options.maxRows } };
}

/** One row as the client returns it (INT64 may come as a number or a string). */
export const asvRowSchema = z.object({
  repo_name: z.string(),
  asv_config_path: z.string(),
  asv_configs: z.union([z.number(), z.string()]).transform(Number),
});
export type AsvRow = z.infer<typeof asvRowSchema>;

/** Rows → candidates; names that are not `owner/name` are skipped (and counted). */
export function rowsToCandidates(rows: readonly AsvRow[]): { candidates: RepositoryCandidate[]; skipped: number } {
  let skipped = 0;
  const candidates: RepositoryCandidate[] = [];
  for (const row of rows) {
    if (!REPO_NAME_RE.test(row.repo_name)) {
      skipped += 1;
      continue;
    }
    candidates.push({ name: row.repo_name, asvConfigPath: row.asv_config_path, via: 'bigquery' });
  }
  return { candidates: dedupeCandidates(candidates), skipped };
}
