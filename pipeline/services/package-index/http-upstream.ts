import { setTimeout as delay } from 'node:timers/promises';
import type { IndexCache } from '../../../cache/index-cache.js';
import type { OutsideServiceError } from '../../errors.js';
import { perfmineVersion } from '../../package-root.js';
import { indexFailure, indexFailureReason } from './index-failure.js';
import type { IndexFile } from './index-page.js';
import { parseProjectPage, UPSTREAM_ACCEPT } from './parse-page.js';
import type { FileBody, Upstream, UpstreamPage } from './upstream.js';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface HttpUpstreamOptions {
  /** The index's base URL (`https://pypi.org/simple/`); a trailing `/` is added when missing. */
  readonly url: string;
  /** Per attempt: the whole answer for a page; the headers, then the gap between chunks, for a file. */
  readonly timeoutMs: number;
  /** Further attempts after a failure that may pass (unreachable, timeout, 429, 5xx). */
  readonly retries: number;
  /** Wait before the first retry, doubled each time (default 500 ms). */
  readonly retryDelayMs?: number;
  /** The page cache in the store; null: every request unconditional, nothing stored. */
  readonly cache: IndexCache | null;
  /** A page larger than this is refused as `upstream-invalid` (default 64 MiB). */
  readonly maxPageBytes?: number;
  readonly fetch?: FetchLike;
}

interface PageAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
  /** The URL that answered (after redirects): relative file URLs resolve against it. */
  readonly finalUrl: string;
}

/** Reasons after which the stored page is served instead (the upstream is away, not saying no). */
const STALE_OK = /^(upstream-unreachable|upstream-timeout|upstream-status-(5\d\d|429))$/;

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/**
 * An HTTP(S) simple index. Every request has a time limit and is retried a bounded number of
 * times; project pages go through the store's cache with conditional requests, and are stored
 * only after a complete answer that parses. When the upstream is unreachable, times out or
 * answers 5xx/429 after every retry, a stored page is served (marked stale) rather than failing.
 */
export class HttpUpstream implements Upstream {
  readonly description: string;
  readonly #base: string;
  readonly #options: HttpUpstreamOptions;
  readonly #fetch: FetchLike;

  constructor(options: HttpUpstreamOptions) {
    this.#base = options.url.endsWith('/') ? options.url : `${options.url}/`;
    this.description = this.#base;
    this.#options = options;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  projectNames(): Promise<readonly string[] | null> {
    return Promise.resolve(null);
  }

  async projectPage(project: string): Promise<UpstreamPage> {
    const url = new URL(`${encodeURIComponent(project)}/`, this.#base).href;
    const cache = this.#options.cache;
    const stored = cache?.get(url);
    const headers: Record<string, string> = { accept: UPSTREAM_ACCEPT, 'user-agent': userAgent() };
    if (stored?.etag) headers['if-none-match'] = stored.etag;
    if (stored?.lastModified) headers['if-modified-since'] = stored.lastModified;
    let answer: PageAnswer;
    try {
      answer = await this.#retrying(url, () => this.#pageExchange(url, headers, stored !== undefined));
    } catch (error) {
      const reason = indexFailureReason(error);
      if (stored && reason !== null && STALE_OK.test(reason)) {
        return {
          page: parseProjectPage(stored.contentType, stored.body.toString('utf8'), url, project),
          cache: 'stale',
          staleBecause: reason,
        };
      }
      throw error;
    }
    if (answer.status === 304 && stored) {
      return { page: parseProjectPage(stored.contentType, stored.body.toString('utf8'), url, project), cache: 'revalidated' };
    }
    const contentType = answer.headers.get('content-type');
    const page = parseProjectPage(contentType, answer.body.toString('utf8'), answer.finalUrl, project);
    const etag = answer.headers.get('etag');
    const lastModified = answer.headers.get('last-modified');
    if (cache && (etag || lastModified)) cache.put({ url, etag, lastModified, contentType: contentType ?? '', body: answer.body });
    return { page, cache: null };
  }

  async openFile(file: IndexFile): Promise<FileBody> {
    return this.#retrying(file.url, async () => {
      const limit = timeLimit(this.#options.timeoutMs);
      const { controller } = limit;
      let response: Response;
      try {
        response = await this.#fetch(file.url, { headers: { 'user-agent': userAgent() }, signal: controller.signal, redirect: 'follow' });
      } catch (error) {
        throw limit.timedOut()
          ? indexFailure('upstream-timeout', `${file.url}: no answer within ${this.#options.timeoutMs} ms`, { cause: error })
          : indexFailure('upstream-unreachable', `${file.url}: ${describe(error)}`, { cause: error });
      } finally {
        limit.clear();
      }
      if (response.status !== 200 || !response.body) {
        await response.body?.cancel().catch(() => undefined);
        throw indexFailure(`upstream-status-${response.status}`, `${file.url}: HTTP ${response.status}`, { status: response.status });
      }
      const length = Number(response.headers.get('content-length'));
      return {
        chunks: chunksOf(response.body, controller, this.#options.timeoutMs, file.url),
        size: Number.isSafeInteger(length) && length >= 0 && response.headers.has('content-length') ? length : null,
        abort: () => controller.abort(),
      };
    });
  }

  /** One attempt at a page: the whole answer within the time limit. */
  async #pageExchange(url: string, headers: Record<string, string>, conditional: boolean): Promise<PageAnswer> {
    const limit = timeLimit(this.#options.timeoutMs);
    try {
      const response = await this.#fetch(url, { headers, signal: limit.controller.signal, redirect: 'follow' });
      if (response.status === 304 && conditional) {
        await response.body?.cancel().catch(() => undefined);
        return { status: 304, headers: response.headers, body: Buffer.alloc(0), finalUrl: url };
      }
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => undefined);
        throw indexFailure(`upstream-status-${response.status}`, `${url}: HTTP ${response.status}`, { status: response.status });
      }
      const body = await readLimited(response, this.#options.maxPageBytes ?? 64 * 1024 * 1024, url);
      return { status: 200, headers: response.headers, body, finalUrl: response.url || url };
    } catch (error) {
      if (indexFailureReason(error) !== null) throw error;
      if (limit.timedOut())
        throw indexFailure('upstream-timeout', `${url}: no complete answer within ${this.#options.timeoutMs} ms`, { cause: error });
      throw indexFailure('upstream-unreachable', `${url}: ${describe(error)}`, { cause: error });
    } finally {
      limit.clear();
    }
  }

  /** Runs an attempt, again after a failure that may pass, at most `retries` more times. */
  async #retrying<T>(url: string, attempt: () => Promise<T>): Promise<T> {
    const base = this.#options.retryDelayMs ?? 500;
    for (let i = 0; ; i += 1) {
      try {
        return await attempt();
      } catch (error) {
        const failure = error as OutsideServiceError;
        if (indexFailureReason(error) === null || !failure.retryable || i >= this.#options.retries) throw error;
        if (base > 0) await delay(base * 2 ** i);
      }
    }
  }
}

/** An abort controller that aborts after `ms`, and whether that is what aborted it. */
function timeLimit(ms: number): { readonly controller: AbortController; timedOut(): boolean; clear(): void } {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, ms);
  return { controller, timedOut: () => timedOut, clear: () => clearTimeout(timer) };
}

function userAgent(): string {
  return `perfmine/${perfmineVersion()} (index time machine)`;
}

/** The body, refused past `maxBytes`. */
async function readLimited(response: Response, maxBytes: number, url: string): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw indexFailure('upstream-invalid', `${url}: page of ${declared} bytes is larger than ${maxBytes}`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  if (response.body) {
    for await (const chunk of response.body) {
      total += chunk.byteLength;
      if (total > maxBytes) throw indexFailure('upstream-invalid', `${url}: page larger than ${maxBytes} bytes`);
      chunks.push(Buffer.from(chunk));
    }
  }
  return Buffer.concat(chunks);
}

/** A file's chunks; a gap longer than `timeoutMs` between two is `upstream-timeout`, a broken transfer `upstream-unreachable`. */
async function* chunksOf(
  body: ReadableStream<Uint8Array>,
  controller: AbortController,
  timeoutMs: number,
  url: string,
): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let timedOut = false;
  let done = false;
  try {
    for (;;) {
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs);
      let result: Awaited<ReturnType<typeof reader.read>>;
      try {
        result = await reader.read();
      } catch (error) {
        throw timedOut
          ? indexFailure('upstream-timeout', `${url}: no byte for ${timeoutMs} ms`, { cause: error })
          : indexFailure('upstream-unreachable', `${url}: the transfer broke: ${describe(error)}`, { cause: error });
      } finally {
        clearTimeout(timer);
      }
      if (result.done) {
        done = true;
        return;
      }
      yield result.value;
    }
  } finally {
    if (!done) controller.abort();
  }
}
