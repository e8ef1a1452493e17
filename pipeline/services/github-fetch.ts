import { setTimeout as delay } from 'node:timers/promises';
import type PQueue from 'p-queue';
import { httpCacheKey, REPLAYED_HEADERS, type CachedResponse, type HttpCache } from '../../cache/http-cache.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import { readRateHeaders, resourceOfPath, type TokenPool } from './github-tokens.js';

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface CachingFetchOptions {
  /** The ETag / Last-Modified store; null disables caching (nothing is conditional). */
  readonly cache: HttpCache | null;
  readonly tokens: TokenPool;
  readonly metrics: Metrics;
  readonly log: Logger;
  /** Each HTTP exchange takes one slot of this queue (`ctx.queues.github`). */
  readonly queue: PQueue;
  readonly timeoutMs: number;
  /** Bodies larger than this are not stored (they are still sent conditionally never). */
  readonly maxCachedBodyBytes: number;
  /** The transport (default: global fetch). */
  readonly fetch?: FetchLike;
  /** Milliseconds per second of a wait (`retry-after`, backoff steps); 1000 in production. */
  readonly retryUnitMs?: number;
  /** A 429 is asked again at most this many times. */
  readonly tooManyRequestsRetries?: number;
  /** A 429 whose `retry-after` is longer than this is not waited for (the item fails, rate-limited). */
  readonly maxRetryAfterSeconds?: number;
}

/** The message GitHub sends with a secondary rate limit (403 or 429). */
export const SECONDARY_RATE_RE = /secondary rate/i;

/**
 * The `fetch` that perfmine hands to Octokit (`request.fetch`). For every exchange it:
 * - picks a token from the pool and sets the Authorization header (Octokit itself holds none);
 * - makes a GET conditional when the cache holds a validator, and answers a 304 from the cache
 *   as a 200 (a 304 costs no rate limit);
 * - stores 200 GET responses that carry an ETag or Last-Modified;
 * - moves on to the next token, at once, when GitHub says the current one is exhausted (the
 *   throttling plugin only sees a primary limit when every token is spent);
 * - rejects a JSON body that does not parse (a truncated response), so the retry plugin retries;
 * - waits as a 429 says (`retry-after`, else a growing backoff) and asks again, a bounded number
 *   of times; a `retry-after` longer than allowed is not waited for (secondary rate limits, which
 *   GitHub names in the body, are the throttling plugin's);
 * - counts requests and keeps the `github.rateRemaining` gauge.
 * Nothing here ever logs a header value.
 */
export function createCachingFetch(options: CachingFetchOptions): FetchLike {
  const transport = options.fetch ?? globalThis.fetch;
  const { cache, tokens, metrics, log, queue } = options;
  /** The token last used per resource, to say when the pool moves on. */
  const lastToken = new Map<string, number>();
  const unit = options.retryUnitMs ?? 1000;
  const maxTooMany = options.tooManyRequestsRetries ?? 3;
  const maxRetryAfter = options.maxRetryAfterSeconds ?? 900;

  return async function perfmineFetch(input, init = {}) {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    const { pathname } = new URL(url);
    const resource = resourceOfPath(pathname);
    const key = method === 'GET' && cache ? httpCacheKey(method, url, headers.get('accept')) : null;
    const cached = key && cache ? cache.get(key) : undefined;
    const conditional = cached !== undefined && (cached.etag !== null || cached.lastModified !== null);
    if (cached?.etag) headers.set('if-none-match', cached.etag);
    else if (cached?.lastModified) headers.set('if-modified-since', cached.lastModified);

    let tooMany = 0;
    for (let attempt = 0; ; attempt++) {
      const index = tokens.pick(resource);
      const previous = lastToken.get(resource);
      if (previous !== undefined && previous !== index && index >= 0) {
        metrics.add('github.tokenRotations');
        log.info({ resource, from: `#${previous}`, to: `#${index}` }, 'GitHub token budget spent; rotating to the next token');
      }
      lastToken.set(resource, index);
      if (index >= 0) headers.set('authorization', `token ${tokens.token(index)}`);
      else headers.delete('authorization');
      const started = Date.now();
      const { response, body } = await queue.add(async () => {
        const signals = [AbortSignal.timeout(options.timeoutMs), ...(init.signal ? [init.signal] : [])];
        const r = await transport(url, { ...init, method, headers, signal: AbortSignal.any(signals) });
        // Read the whole body inside the slot: a connection cut half-way fails here and is retried.
        return { response: r, body: Buffer.from(await r.arrayBuffer()) };
      });
      metrics.add('github.requests');
      if (conditional) metrics.add('github.conditional');
      const rate = readRateHeaders(response.headers);
      tokens.observe(index, resource, rate);
      if (rate.remaining !== null && (rate.resource ?? resource) === 'core') metrics.set('github.rateRemaining', rate.remaining);
      log.debug(
        { method, path: pathname, status: response.status, conditional, token: index < 0 ? null : `#${index}`, ms: Date.now() - started },
        'github request',
      );

      if ((response.status === 403 || response.status === 429) && rate.remaining === 0 && !SECONDARY_RATE_RE.test(body.toString('utf8'))) {
        tokens.exhaust(index, rate.resource ?? resource, rate.reset);
        metrics.add('github.tokensExhausted');
        if (tokens.hasAlternative(index, rate.resource ?? resource) && attempt < tokens.size) {
          log.warn({ resource: rate.resource ?? resource, exhausted: `#${index}` }, 'GitHub token exhausted; rotating to the next one');
          continue;
        }
      }

      if (response.status === 429 && rate.remaining !== 0 && !SECONDARY_RATE_RE.test(body.toString('utf8'))) {
        const after = retryAfterSeconds(response.headers.get('retry-after'));
        metrics.add('github.tooManyRequests');
        if (after !== null && after > maxRetryAfter) {
          log.warn(
            { method, path: pathname, retryAfterSeconds: after, maxSeconds: maxRetryAfter },
            'GitHub answered 429 with a retry-after longer than allowed; not waiting',
          );
        } else if (tooMany < maxTooMany) {
          tooMany += 1;
          const seconds = after ?? tooMany * tooMany;
          log.warn({ method, path: pathname, retryAfterSeconds: seconds, attempt: tooMany }, 'GitHub answered 429; waiting as told');
          await delay(seconds * unit, undefined, init.signal ? { signal: init.signal } : {});
          continue;
        }
      }

      if (response.status === 304 && cached && key && cache) {
        metrics.add('github.notModified');
        // Nothing is written: a repeat of an unchanged window leaves the store as it was.
        return replay(cached, response.headers);
      }

      const contentType = response.headers.get('content-type') ?? '';
      if (response.status < 300 && /json/i.test(contentType) && body.length > 0) {
        try {
          JSON.parse(body.toString('utf8'));
        } catch {
          metrics.add('github.badBodies');
          throw new Error(`GitHub sent an incomplete JSON body for ${method} ${pathname} (${body.length} bytes)`);
        }
      }

      if (key && cache && response.status === 200 && body.length <= options.maxCachedBodyBytes) {
        const etag = response.headers.get('etag');
        const lastModified = response.headers.get('last-modified');
        if (etag !== null || lastModified !== null) {
          cache.put(key, { url, etag, lastModified, status: 200, headers: pick(response.headers), body });
        }
      }
      return new Response(nullBodyStatus(response.status) ? null : body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
  };
}

/** `retry-after` as seconds (a number or an HTTP date); null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

function pick(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const v = headers.get(name);
    if (v !== null) out[name] = v;
  }
  return out;
}

/** The cached response, with the fresh rate-limit headers of the 304. */
function replay(cached: CachedResponse, fresh: Headers): Response {
  const headers = new Headers(cached.headers);
  for (const [name, value] of fresh) if (name.startsWith('x-ratelimit-') || name === 'date') headers.set(name, value);
  headers.set('x-perfmine-cache', 'revalidated');
  return new Response(cached.body, { status: cached.status, headers });
}

function nullBodyStatus(status: number): boolean {
  return status === 101 || status === 204 || status === 205 || status === 304;
}
