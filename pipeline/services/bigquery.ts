import type { BigQuery } from '@google-cloud/bigquery';
import { lazyRequire } from './lazy-require.js';

const bigquery = lazyRequire<typeof import('@google-cloud/bigquery')>('@google-cloud/bigquery');
import type PQueue from 'p-queue';
import type { z } from 'zod';
import { missingCredential } from '../credentials.js';
import { OutsideServiceError } from '../errors.js';
import type { Logger } from '../logging.js';

export interface BigQueryServiceOptions {
  /** A client made elsewhere (tests point one at a loopback server); default: built on first use. */
  readonly client?: BigQuery;
  /** `BIGQUERY_PROJECT`: the project billed for queries. */
  readonly projectId?: string | undefined;
  readonly location: string;
  /** Queries run through this queue (`ctx.queues.bigquery`). */
  readonly queue: PQueue;
  readonly timeoutMs: number;
  readonly log: Logger;
}

export interface QueryOptions {
  /** Refuse to run when the query would bill more bytes than this. */
  readonly maxBytesBilled?: number | null;
}

/**
 * The BigQuery adapter (`@google-cloud/bigquery`). Authentication is the library's own
 * (GOOGLE_APPLICATION_CREDENTIALS or other application default credentials); the project comes
 * from BIGQUERY_PROJECT. Rows are validated with zod.
 */
export class BigQueryService {
  #client: BigQuery | undefined;
  readonly #options: BigQueryServiceOptions;

  constructor(options: BigQueryServiceOptions) {
    this.#options = options;
    this.#client = options.client;
  }

  /** Throws a ConfigError naming the variable when queries cannot run. */
  checkConfigured(): void {
    if (this.#client) return;
    if (!this.#options.projectId) {
      throw missingCredential(
        'BIGQUERY_PROJECT',
        'discover with discover.source "bigquery" (the project billed for the query)',
        'set BIGQUERY_PROJECT and GOOGLE_APPLICATION_CREDENTIALS, or use discover.source "code-search" (GITHUB_TOKEN) or "list" (discover.listFile), or pass --repo',
      );
    }
  }

  get client(): BigQuery {
    this.checkConfigured();
    this.#client ??= new (bigquery().BigQuery)({ projectId: this.#options.projectId!, location: this.#options.location });
    return this.#client;
  }

  /** Runs a standard-SQL query with named parameters; every row is validated by `rowSchema`. */
  async query<S extends z.ZodType>(
    sql: string,
    params: Record<string, unknown>,
    rowSchema: S,
    options: QueryOptions = {},
  ): Promise<z.infer<S>[]> {
    const client = this.client;
    const started = Date.now();
    const rows = await this.#options.queue.add(async () => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new OutsideServiceError('bigquery', 'bigquery-timeout', `the query did not finish within ${this.#options.timeoutMs} ms`, {
                retryable: true,
              }),
            ),
          this.#options.timeoutMs,
        );
      });
      try {
        const [result] = await Promise.race([
          client.query({
            query: sql,
            params,
            location: this.#options.location,
            useLegacySql: false,
            ...(options.maxBytesBilled ? { maximumBytesBilled: String(options.maxBytesBilled) } : {}),
          }),
          timeout,
        ]);
        return result as unknown[];
      } catch (error) {
        if (error instanceof OutsideServiceError) throw error;
        throw mapBigQueryError(error);
      } finally {
        clearTimeout(timer);
      }
    });
    this.#options.log.debug({ rows: rows.length, ms: Date.now() - started }, 'bigquery query');
    return rows.map((row, i) => {
      const parsed = rowSchema.safeParse(row);
      if (parsed.success) return parsed.data as z.infer<S>;
      const issue = parsed.error.issues[0];
      throw new OutsideServiceError(
        'bigquery',
        'bigquery-bad-row',
        `row ${i}: unexpected shape (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'})`,
      );
    });
  }
}

function mapBigQueryError(error: unknown): OutsideServiceError {
  const e = error as { code?: unknown; message?: string; errors?: { reason?: string }[] };
  const code = typeof e.code === 'number' ? e.code : undefined;
  const message = (e.message ?? String(error)).slice(0, 500);
  const reason = e.errors?.[0]?.reason;
  if (code === 401 || code === 403 || /Could not load the default credentials/i.test(message)) {
    return new OutsideServiceError('bigquery', 'bigquery-unauthorized', `BigQuery refused the request: ${message}`, {
      ...(code === undefined ? {} : { status: code }),
      fix: 'check GOOGLE_APPLICATION_CREDENTIALS (a service account with BigQuery Job User) and BIGQUERY_PROJECT',
      cause: error,
    });
  }
  if (reason === 'bytesBilledLimitExceeded') {
    return new OutsideServiceError(
      'bigquery',
      'bigquery-too-expensive',
      `the query would bill more than discover.bigquery.maxBytesBilled: ${message}`,
      {
        fix: 'raise discover.bigquery.maxBytesBilled, or set it to null',
        cause: error,
      },
    );
  }
  const retryable = code === undefined || code >= 500 || code === 429;
  return new OutsideServiceError('bigquery', retryable ? 'bigquery-unavailable' : 'bigquery-error', `BigQuery: ${message}`, {
    ...(code === undefined ? {} : { status: code }),
    retryable,
    cause: error,
  });
}
