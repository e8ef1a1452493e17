/** The candidate repositories of a discover run: `--repo`, or the configured source. */
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../pipeline/errors.js';
import type { PipelineContext } from '../../pipeline/stage.js';
import type { Scope } from '../../pipeline/scope.js';
import { asvRowSchema, buildAsvQuery, rowsToCandidates } from './bigquery-query.js';
import type { RepositoryCandidate } from './candidate.js';
import { searchAsvRepositories } from './code-search.js';
import { parseRepoList } from './list-file.js';

export async function listCandidates(ctx: PipelineContext, scope: Scope): Promise<RepositoryCandidate[]> {
  const config = ctx.config.discover;
  const log = ctx.log.child({ stage: 'discover' });
  if (scope.repos.length > 0) return scope.repos.map((name) => ({ name, asvConfigPath: null, via: 'cli' }));
  switch (config.source) {
    case 'list': {
      if (!config.listFile) {
        throw new ConfigError('discover.listFile: not set; discover.source "list" reads repositories from it', {
          reason: 'invalid-config',
          fix: 'set discover.listFile in perfmine.config.json (one owner/name a line, or a TSV with a repo column), or pass --repo',
        });
      }
      let text: string;
      try {
        text = await readFile(config.listFile, 'utf8');
      } catch (error) {
        throw new ConfigError(`discover.listFile: cannot read ${config.listFile}: ${(error as Error).message}`, {
          reason: 'invalid-config',
        });
      }
      const parsed = parseRepoList(text);
      for (const e of parsed.errors) log.warn({ file: config.listFile }, e);
      if (parsed.candidates.length === 0 && parsed.errors.length > 0) {
        throw new ConfigError(
          parsed.errors.map((e) => `discover.listFile ${config.listFile}: ${e}`),
          { reason: 'invalid-config' },
        );
      }
      log.info({ file: config.listFile, repositories: parsed.candidates.length }, 'read the repository list');
      return parsed.candidates;
    }
    case 'code-search': {
      const result = await searchAsvRepositories(ctx.services.github, config.codeSearch, log);
      log.info(
        { repositories: result.candidates.length, requests: result.requests, shards: result.shards, unreachable: result.unreachable },
        'code search done',
      );
      return result.candidates;
    }
    case 'bigquery': {
      const { sql, params } = buildAsvQuery({
        filesTable: config.bigquery.filesTable,
        languagesTable: config.bigquery.languagesTable,
        maxRows: config.bigquery.maxRows,
      });
      const rows = await ctx.services.bigquery.query(sql, params, asvRowSchema, { maxBytesBilled: config.bigquery.maxBytesBilled });
      const { candidates, skipped } = rowsToCandidates(rows);
      log.info({ rows: rows.length, repositories: candidates.length, skipped }, 'BigQuery query done');
      return candidates;
    }
  }
}
