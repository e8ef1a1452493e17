import type { Db } from './store.js';
import { nowIso } from './store.js';

/** A stored GET response with its validators. */
export interface CachedResponse {
  readonly url: string;
  readonly etag: string | null;
  readonly lastModified: string | null;
  readonly status: number;
  /** Response headers worth replaying (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

interface RawRow {
  url: string;
  etag: string | null;
  last_modified: string | null;
  status: number;
  headers: string;
  body: Buffer;
}

/** Headers replayed from the cache on a 304 (the rate-limit headers come from the 304 itself). */
export const REPLAYED_HEADERS = ['content-type', 'link', 'etag', 'last-modified', 'x-github-media-type'] as const;

/** The cache key of a request: method, media type and URL. Never a credential. */
export function httpCacheKey(method: string, url: string, accept: string | null): string {
  return `${method.toUpperCase()} ${accept ?? '*/*'} ${url}`;
}

/**
 * The ETag / Last-Modified cache of GitHub GET responses (table `http_cache`). A stored entry
 * makes the next identical request conditional; a 304 is answered from the entry.
 */
export class HttpCache {
  readonly #get;
  readonly #put;
  readonly #count;

  constructor(db: Db) {
    this.#get = db.prepare<[string], RawRow>('SELECT url, etag, last_modified, status, headers, body FROM http_cache WHERE key = ?');
    this.#put = db.prepare(`
      INSERT INTO http_cache (key, url, etag, last_modified, status, headers, body, stored_at, validated_at)
      VALUES (@key, @url, @etag, @lastModified, @status, @headers, @body, @now, @now)
      ON CONFLICT (key) DO UPDATE SET url = excluded.url, etag = excluded.etag, last_modified = excluded.last_modified,
        status = excluded.status, headers = excluded.headers, body = excluded.body,
        stored_at = excluded.stored_at, validated_at = excluded.validated_at`);
    this.#count = db.prepare<[], { n: number; bytes: number | null }>('SELECT COUNT(*) AS n, SUM(LENGTH(body)) AS bytes FROM http_cache');
  }

  get(key: string): CachedResponse | undefined {
    const row = this.#get.get(key);
    if (!row) return undefined;
    return {
      url: row.url,
      etag: row.etag,
      lastModified: row.last_modified,
      status: row.status,
      headers: JSON.parse(row.headers) as Record<string, string>,
      body: row.body,
    };
  }

  put(key: string, entry: CachedResponse): void {
    this.#put.run({
      key,
      url: entry.url,
      etag: entry.etag,
      lastModified: entry.lastModified,
      status: entry.status,
      headers: JSON.stringify(entry.headers),
      body: entry.body,
      now: nowIso(),
    });
  }

  stats(): { entries: number; bytes: number } {
    const row = this.#count.get();
    return { entries: row?.n ?? 0, bytes: row?.bytes ?? 0 };
  }
}
