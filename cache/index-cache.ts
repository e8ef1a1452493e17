import type { Db } from './store.js';
import { nowIso } from './store.js';

/** A stored project page of a package index with its validators. */
export interface CachedIndexPage {
  readonly url: string;
  readonly etag: string | null;
  readonly lastModified: string | null;
  readonly contentType: string;
  readonly body: Buffer;
}

interface RawRow {
  url: string;
  etag: string | null;
  last_modified: string | null;
  content_type: string;
  body: Buffer;
}

/**
 * The ETag / Last-Modified cache of package-index project pages (table `index_pages`): a stored
 * page makes the next request for it conditional, and a 304 is answered from it. Each `put` is
 * one statement (SQLite writes it whole or not at all), and callers put only complete, parsed pages.
 */
export class IndexCache {
  readonly #get;
  readonly #put;
  readonly #count;

  constructor(db: Db) {
    this.#get = db.prepare<[string], RawRow>('SELECT url, etag, last_modified, content_type, body FROM index_pages WHERE url = ?');
    this.#put = db.prepare(`
      INSERT INTO index_pages (url, etag, last_modified, content_type, body, stored_at)
      VALUES (@url, @etag, @lastModified, @contentType, @body, @now)
      ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified,
        content_type = excluded.content_type, body = excluded.body, stored_at = excluded.stored_at`);
    this.#count = db.prepare<[], { n: number; bytes: number | null }>('SELECT COUNT(*) AS n, SUM(LENGTH(body)) AS bytes FROM index_pages');
  }

  get(url: string): CachedIndexPage | undefined {
    const row = this.#get.get(url);
    if (!row) return undefined;
    return { url: row.url, etag: row.etag, lastModified: row.last_modified, contentType: row.content_type, body: row.body };
  }

  put(page: CachedIndexPage): void {
    this.#put.run({
      url: page.url,
      etag: page.etag,
      lastModified: page.lastModified,
      contentType: page.contentType,
      body: page.body,
      now: nowIso(),
    });
  }

  stats(): { entries: number; bytes: number } {
    const row = this.#count.get();
    return { entries: row?.n ?? 0, bytes: row?.bytes ?? 0 };
  }
}
