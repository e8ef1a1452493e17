import { BigQuery } from '@google-cloud/bigquery';
import { OAuth2Client } from 'google-auth-library';
import PQueue from 'p-queue';
import { afterEach, describe, expect, it } from 'vitest';
import { runStage } from '../../pipeline/runner.js';
import { BigQueryService } from '../../pipeline/services/bigquery.js';
import { createLogger } from '../../pipeline/logging.js';
import { ASV_PATH_PATTERN, asvRowSchema, buildAsvQuery, rowsToCandidates } from '../../stages/discover/bigquery-query.js';
import { discoverStage } from '../../stages/discover/index.js';
import { testContext, testScope } from '../fixtures/context.js';
import { FakeBigQuery } from '../fakes/bigquery-server.js';

const silent = createLogger({ level: 'silent', format: 'json', destination: { write: () => undefined } });

function client(url: string): BigQuery {
  const auth = new OAuth2Client();
  auth.setCredentials({ access_token: 'test-access-token', expiry_date: Date.now() + 3_600_000 });
  return new BigQuery({ projectId: 'perfmine-test', apiEndpoint: url, authClient: auth });
}

describe('BigQuery query (pure)', () => {
  it('finds asv.conf.json / .jsonc anywhere in the tree, Python repositories only, shallowest path first', () => {
    const { sql, params } = buildAsvQuery({
      filesTable: 'bigquery-public-data.github_repos.files',
      languagesTable: 'bigquery-public-data.github_repos.languages',
      maxRows: 5000,
    });
    expect(sql).toContain('FROM `bigquery-public-data.github_repos.files` AS f');
    expect(sql).toContain('WHERE REGEXP_CONTAINS(f.path, @asv_path_pattern)');
    expect(sql).toContain('FROM `bigquery-public-data.github_repos.languages` AS l, UNNEST(l.language) AS lang');
    expect(sql).toContain("WHERE lang.name = 'Python'");
    expect(sql).toContain(
      "ARRAY_AGG(f.path ORDER BY ARRAY_LENGTH(SPLIT(f.path, '/')), LENGTH(f.path), f.path LIMIT 1)[OFFSET(0)] AS asv_config_path",
    );
    expect(sql).toContain('GROUP BY f.repo_name');
    expect(sql).toContain('LIMIT @max_rows');
    expect(params).toEqual({ asv_path_pattern: ASV_PATH_PATTERN, max_rows: 5000 });
    const re = new RegExp(ASV_PATH_PATTERN);
    expect(['asv.conf.json', 'benchmarks/asv.conf.jsonc', 'a/b/asv.conf.json'].every((p) => re.test(p))).toBe(true);
    expect(['asv.conf.json.bak', 'myasv.conf.json', 'asv.conf.yaml'].some((p) => re.test(p))).toBe(false);
    expect(buildAsvQuery({ filesTable: 'p.d.files', languagesTable: null, maxRows: 1 }).sql).not.toContain('languages');
    expect(() => buildAsvQuery({ filesTable: 'x`; DROP TABLE y; --', languagesTable: null, maxRows: 1 })).toThrow(/not a table name/);
  });

  it('maps rows to candidates (integers as strings or numbers; odd names skipped)', () => {
    const rows = [
      { repo_name: 'pandas-dev/pandas', asv_config_path: 'asv_bench/asv.conf.json', asv_configs: '1' },
      { repo_name: 'not a repo', asv_config_path: 'asv.conf.json', asv_configs: 1 },
      { repo_name: 'Pandas-Dev/pandas', asv_config_path: 'asv.conf.json', asv_configs: 2 },
    ].map((r) => asvRowSchema.parse(r));
    expect(rows[0]!.asv_configs).toBe(1);
    expect(rowsToCandidates(rows)).toEqual({
      candidates: [{ name: 'pandas-dev/pandas', asvConfigPath: 'asv_bench/asv.conf.json', via: 'bigquery' }],
      skipped: 1,
    });
    expect(asvRowSchema.safeParse({ repo_name: 'a/b' }).success).toBe(false);
  });
});

describe('BigQuery adapter against a loopback server (real client)', () => {
  let bq: FakeBigQuery;
  afterEach(async () => {
    await bq.close();
  });

  const fields = [
    { name: 'repo_name', type: 'STRING' as const },
    { name: 'asv_config_path', type: 'STRING' as const },
    { name: 'asv_configs', type: 'INTEGER' as const },
  ];
  const rows = Array.from({ length: 25 }, (_, i) => ({
    repo_name: `org${i}/proj${i}`,
    asv_config_path: i % 2 ? 'asv.conf.json' : 'benchmarks/asv.conf.json',
    asv_configs: 1,
  }));

  it('sends the query with its parameters and reads every page of rows', async () => {
    bq = await FakeBigQuery.start({ fields, rows, pageSize: 10, incompleteFirst: true });
    const service = new BigQueryService({
      client: client(bq.url),
      location: 'US',
      queue: new PQueue({ concurrency: 1 }),
      timeoutMs: 20_000,
      log: silent,
    });
    const { sql, params } = buildAsvQuery({ filesTable: 'bigquery-public-data.github_repos.files', languagesTable: null, maxRows: 100 });
    const got = await service.query(sql, params, asvRowSchema, { maxBytesBilled: 1_000_000 });
    expect(got).toHaveLength(25);
    expect(got[3]).toEqual({ repo_name: 'org3/proj3', asv_config_path: 'asv.conf.json', asv_configs: 1 });
    const [sent] = bq.queries();
    expect(sent!.query).toBe(sql);
    expect(sent!.useLegacySql).toBe(false);
    expect(sent!.maximumBytesBilled).toBe('1000000');
    expect(JSON.stringify(sent!.queryParameters)).toContain('"name":"asv_path_pattern"');
    expect(JSON.stringify(sent!.queryParameters)).toContain('"name":"max_rows"');
    expect(bq.log.filter((r) => r.method === 'GET').length).toBe(3); // poll, then pages 2 and 3
    expect(bq.log.every((r) => r.authorization === 'Bearer test-access-token')).toBe(true);
  });

  it('maps a refusal to a named outside-service error', async () => {
    bq = await FakeBigQuery.start({
      fields,
      rows,
      error: { code: 403, reason: 'accessDenied', message: 'Access Denied: Project perfmine-test' },
    });
    const service = new BigQueryService({
      client: client(bq.url),
      location: 'US',
      queue: new PQueue({ concurrency: 1 }),
      timeoutMs: 20_000,
      log: silent,
    });
    await expect(service.query('SELECT 1', {}, asvRowSchema)).rejects.toMatchObject({
      kind: 'outside-service',
      reason: 'bigquery-unauthorized',
    });
  });

  it("feeds discover's plan: one item per repository BigQuery found, with its asv config path", async () => {
    bq = await FakeBigQuery.start({ fields, rows: rows.slice(0, 2) });
    const service = new BigQueryService({
      client: client(bq.url),
      location: 'US',
      queue: new PQueue({ concurrency: 1 }),
      timeoutMs: 20_000,
      log: silent,
    });
    const t = testContext({
      tokens: ['tok'],
      services: { bigquery: service },
      config: { discover: { source: 'bigquery' }, github: { baseUrl: 'http://127.0.0.1:9', retries: 0 } },
    });
    const plan = await discoverStage.plan(t.ctx, testScope());
    expect(plan.map((i) => [i.key, (i.input as { asvConfigPath: string }).asvConfigPath, (i.input as { via: string }).via])).toEqual([
      ['org0/proj0', 'benchmarks/asv.conf.json', 'bigquery'],
      ['org1/proj1', 'asv.conf.json', 'bigquery'],
    ]);
  });

  it('without BIGQUERY_PROJECT, discover with the bigquery source stops before any item and says what works instead', async () => {
    bq = await FakeBigQuery.start({ fields, rows });
    const t = testContext({ tokens: ['tok'], config: { discover: { source: 'bigquery' } } });
    await expect(runStage(t.ctx, discoverStage, testScope())).rejects.toThrow(/BIGQUERY_PROJECT: not set/);
    expect(bq.log).toHaveLength(0);
  });
});
