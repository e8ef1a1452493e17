/**
 * A loopback stand-in for BigQuery's REST API (v2), enough for `BigQuery#query` of the real
 * `@google-cloud/bigquery` client: `jobs.query` (POST /projects/{p}/queries) answers the first
 * page (or "not complete yet" when asked), `jobs.getQueryResults` (GET /projects/{p}/queries/{job})
 * the next pages through `pageToken`. Rows go out in BigQuery's `{f: [{v}]}` form, integers as
 * strings. Every request is logged with its JSON body.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeField {
  readonly name: string;
  readonly type: 'STRING' | 'INTEGER' | 'INT64' | 'BOOLEAN' | 'FLOAT';
}

export interface FakeBigQueryOptions {
  readonly fields: readonly FakeField[];
  readonly rows: readonly Readonly<Record<string, string | number | boolean | null>>[];
  /** Rows per page (default 1000). */
  readonly pageSize?: number;
  /** Answer the first call "jobComplete: false", so that the client polls. */
  readonly incompleteFirst?: boolean;
  /** Answer every query with this error (e.g. 403 accessDenied). */
  readonly error?: { readonly code: number; readonly reason: string; readonly message: string };
}

export interface LoggedBigQueryRequest {
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
  readonly authorization: string | null;
}

export class FakeBigQuery {
  readonly #server: Server;
  readonly #options: FakeBigQueryOptions;
  readonly log: LoggedBigQueryRequest[] = [];
  url = '';

  private constructor(options: FakeBigQueryOptions) {
    this.#options = options;
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const body: unknown = text ? JSON.parse(text) : null;
        const url = new URL(req.url ?? '/', 'http://x');
        this.log.push({
          method: req.method ?? 'GET',
          path: `${url.pathname}${url.search}`,
          body,
          authorization: req.headers.authorization ?? null,
        });
        const [status, json] = this.#answer(req.method ?? 'GET', url);
        res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
        res.end(JSON.stringify(json));
      });
    });
  }

  static async start(options: FakeBigQueryOptions): Promise<FakeBigQuery> {
    const bq = new FakeBigQuery(options);
    await new Promise<void>((resolve) => bq.#server.listen(0, '127.0.0.1', resolve));
    bq.url = `http://127.0.0.1:${(bq.#server.address() as AddressInfo).port}`;
    return bq;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The request bodies of jobs.query calls. */
  queries(): { query: string; queryParameters?: unknown; maximumBytesBilled?: string; useLegacySql?: boolean; location?: string }[] {
    return this.log.filter((r) => r.method === 'POST' && /\/queries(\?|$)/.test(r.path)).map((r) => r.body as never);
  }

  #answer(method: string, url: URL): [number, unknown] {
    const o = this.#options;
    if (o.error)
      return [
        o.error.code,
        {
          error: {
            code: o.error.code,
            message: o.error.message,
            errors: [{ reason: o.error.reason, message: o.error.message }],
            status: 'PERMISSION_DENIED',
          },
        },
      ];
    const post = /^\/bigquery\/v2\/projects\/([^/]+)\/queries$/.exec(url.pathname);
    const get = /^\/bigquery\/v2\/projects\/([^/]+)\/queries\/([^/]+)$/.exec(url.pathname);
    if (method === 'POST' && post) {
      const jobReference = { projectId: post[1], jobId: 'job_fake_1', location: 'US' };
      if (o.incompleteFirst) return [200, { kind: 'bigquery#queryResponse', jobReference, jobComplete: false }];
      return [200, { kind: 'bigquery#queryResponse', jobReference, ...this.#page(0) }];
    }
    if (method === 'GET' && get) {
      const start = Number(url.searchParams.get('pageToken') ?? 0);
      return [
        200,
        {
          kind: 'bigquery#getQueryResultsResponse',
          jobReference: { projectId: get[1], jobId: get[2], location: 'US' },
          ...this.#page(start),
        },
      ];
    }
    return [404, { error: { code: 404, message: `Not found: ${url.pathname}` } }];
  }

  #page(start: number): Record<string, unknown> {
    const o = this.#options;
    const size = o.pageSize ?? 1000;
    const rows = o.rows
      .slice(start, start + size)
      .map((row) => ({ f: o.fields.map((f) => ({ v: row[f.name] === null || row[f.name] === undefined ? null : String(row[f.name]) })) }));
    return {
      schema: { fields: o.fields.map((f) => ({ name: f.name, type: f.type, mode: 'NULLABLE' })) },
      totalRows: String(o.rows.length),
      rows,
      jobComplete: true,
      cacheHit: false,
      totalBytesProcessed: '123456',
      ...(start + size < o.rows.length ? { pageToken: String(start + size) } : {}),
    };
  }
}
