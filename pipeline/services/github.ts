import PQueue from 'p-queue';
import { z } from 'zod';
import { HttpCache } from '../../cache/http-cache.js';
import type { Db } from '../../cache/store.js';
import { ConfigError, OutsideServiceError, PerfmineError } from '../errors.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import { createCachingFetch, SECONDARY_RATE_RE, type FetchLike } from './github-fetch.js';
import {
  ghBlobSchema,
  ghCodeSearchSchema,
  ghCommentsSchema,
  ghContentFileSchema,
  ghGitCommitSchema,
  ghIssueSchema,
  ghPullFilesSchema,
  ghPullListSchema,
  ghPullSchema,
  ghRepositorySchema,
  ghTreeSchema,
  type GhCodeSearch,
  type GhComment,
  type GhGitCommit,
  type GhIssue,
  type GhPull,
  type GhPullFile,
  type GhPullListItem,
  type GhRepository,
  type GhTree,
} from './github-schemas.js';
import { TokenPool } from './github-tokens.js';

export interface GitHubServiceOptions {
  /** REST root (`https://api.github.com`, or a loopback stand-in). */
  readonly baseUrl: string;
  readonly tokens: readonly string[];
  /** Every HTTP exchange takes a slot of this queue (`ctx.queues.github`). */
  readonly queue: PQueue;
  readonly timeoutMs: number;
  readonly metrics: Metrics;
  readonly log: Logger;
  /** The store for the ETag cache; null: no cache (every request is unconditional). */
  readonly db: Db | null;
  /** Retries of a failed request (5xx, connection errors, truncated bodies). */
  readonly retries: number;
  /**
   * Milliseconds per second of every retry wait: `retry-after` and rate-limit resets are
   * multiplied by it, and so are the backoff steps (1, 4, 9 ...). 1000 in production; tests set 1.
   */
  readonly retryUnitMs: number;
  /** Longest wait for a primary rate limit to reset (when every token is spent) before failing. */
  readonly maxRateLimitWaitSeconds: number;
  /** Times a request is retried after a secondary rate limit. */
  readonly secondaryRateLimitRetries: number;
  /** Minimum milliseconds between two search requests (GitHub allows about 10 code searches a minute). */
  readonly searchIntervalMs: number;
  readonly maxCachedBodyBytes: number;
  /** The transport (default: global fetch). */
  readonly fetch?: FetchLike;
}

export interface CodeSearchPage {
  readonly totalCount: number;
  readonly incomplete: boolean;
  readonly items: GhCodeSearch['items'];
}

const PassThroughGroup = {
  key: () => ({ schedule: <T>(_options: unknown, fn: (...args: unknown[]) => T, ...args: unknown[]) => fn(...args) }),
};

type OctokitModules = [typeof import('@octokit/rest'), typeof import('@octokit/plugin-throttling'), typeof import('@octokit/plugin-retry')];
/** Octokit with the throttling and retry plugins. */
const withPlugins = ([{ Octokit }, { throttling }, { retry }]: OctokitModules) => Octokit.plugin(throttling, retry);
type PerfmineOctokitClass = ReturnType<typeof withPlugins>;
type PerfmineOctokit = InstanceType<PerfmineOctokitClass>;
type PerfmineOctokitOptions = NonNullable<ConstructorParameters<PerfmineOctokitClass>[0]>;

/**
 * Octokit and its plugins, imported the first time a request is made: commands that never call
 * GitHub (collect from a clone, filter, status) start without them (about 200 KB of the bundle).
 */
async function loadOctokit(): Promise<PerfmineOctokitClass> {
  return withPlugins(await Promise.all([import('@octokit/rest'), import('@octokit/plugin-throttling'), import('@octokit/plugin-retry')]));
}

/**
 * The GitHub adapter: Octokit with the throttling and retry plugins, every GET through the
 * ETag cache, tokens rotated, responses validated with zod, failures mapped to perfmine's error
 * kinds. Methods return plain validated data.
 */
export class GitHubService {
  /** The client, made on first use (`#client`) with these options. */
  #octokit: Promise<PerfmineOctokit> | null = null;
  readonly #octokitOptions: PerfmineOctokitOptions;
  readonly #log: Logger;
  readonly #searchQueue: PQueue;
  readonly #tokens: number;

  constructor(options: GitHubServiceOptions) {
    this.#log = options.log;
    this.#tokens = options.tokens.length;
    const pool = new TokenPool(options.tokens);
    const cache = options.db ? new HttpCache(options.db) : null;
    const log = options.log;
    this.#searchQueue = new PQueue({ concurrency: 1, interval: Math.max(1, options.searchIntervalMs), intervalCap: 1 });
    const fetch = createCachingFetch({
      cache,
      tokens: pool,
      metrics: options.metrics,
      log,
      queue: options.queue,
      timeoutMs: options.timeoutMs,
      maxCachedBodyBytes: options.maxCachedBodyBytes,
      retryUnitMs: options.retryUnitMs,
      tooManyRequestsRetries: options.retries,
      maxRetryAfterSeconds: options.maxRateLimitWaitSeconds,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    this.#octokitOptions = {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      userAgent: 'perfmine',
      request: { fetch },
      log: {
        debug: () => undefined,
        info: (message: string) => log.debug({ source: 'octokit' }, message),
        warn: (message: string) => log.warn({ source: 'octokit' }, message),
        error: (message: string) => log.error({ source: 'octokit' }, message),
      },
      // 406: a diff too large to render; never worth repeating. 429: the fetch waits as GitHub
      // says (retry-after) and asks again itself; the plugin's fixed backoff would ignore it.
      retry: {
        retries: options.retries,
        retryAfterBaseValue: options.retryUnitMs,
        doNotRetry: [400, 401, 403, 404, 406, 410, 422, 429, 451],
      },
      throttle: {
        retryAfterBaseValue: options.retryUnitMs,
        // Search pacing is ours (searchIntervalMs); the plugin's own 2 s spacing would double it.
        search: PassThroughGroup as never,
        onRateLimit: (retryAfter: number, request: { method: string; url: string }, _octokit: unknown, retryCount: number) => {
          options.metrics.add('github.rateLimited');
          if (retryAfter <= options.maxRateLimitWaitSeconds && retryCount < 2) {
            log.warn(
              { retryAfterSeconds: retryAfter, method: request.method, url: request.url },
              'GitHub rate limit reached on every token; waiting for the reset',
            );
            return true;
          }
          log.warn(
            { retryAfterSeconds: retryAfter, method: request.method, url: request.url },
            'GitHub rate limit reached on every token; not waiting that long',
          );
          return false;
        },
        onSecondaryRateLimit: (retryAfter: number, request: { method: string; url: string }, _octokit: unknown, retryCount: number) => {
          options.metrics.add('github.secondaryRateLimited');
          if (retryCount < options.secondaryRateLimitRetries) {
            log.warn(
              { retryAfterSeconds: retryAfter, method: request.method, url: request.url },
              'GitHub secondary rate limit; waiting as told',
            );
            return true;
          }
          return false;
        },
      },
    };
  }

  /** The Octokit client, made the first time a request needs it. */
  #client(): Promise<PerfmineOctokit> {
    this.#octokit ??= loadOctokit().then((PerfmineOctokit) => new PerfmineOctokit(this.#octokitOptions));
    return this.#octokit;
  }

  /** A repository (a renamed one is followed through GitHub's 301 to its new name). */
  async getRepository(fullName: string): Promise<GhRepository> {
    const [owner, repo] = split(fullName);
    return this.#get('GET /repos/{owner}/{repo}', { owner, repo }, ghRepositorySchema, `repository ${fullName}`);
  }

  /**
   * Closed pull requests into `base`, most recently updated first, a page at a time (100 per
   * page; `Link` pagination). The caller stops iterating when it has seen enough.
   */
  async *closedPullsByUpdated(fullName: string, base: string, perPage = 100): AsyncGenerator<GhPullListItem[]> {
    const [owner, repo] = split(fullName);
    const octokit = await this.#client();
    const iterator = octokit.paginate.iterator('GET /repos/{owner}/{repo}/pulls', {
      owner,
      repo,
      state: 'closed',
      base,
      sort: 'updated',
      direction: 'desc',
      per_page: perPage,
    });
    try {
      for await (const page of iterator) yield parse(ghPullListSchema, page.data, `pull requests of ${fullName}`);
    } catch (error) {
      throw mapGitHubError(error, `pull requests of ${fullName}`);
    }
  }

  async getPull(fullName: string, number: number): Promise<GhPull> {
    const [owner, repo] = split(fullName);
    return this.#get(
      'GET /repos/{owner}/{repo}/pulls/{pull_number}',
      { owner, repo, pull_number: number },
      ghPullSchema,
      `${fullName}#${number}`,
    );
  }

  /** Every file of a pull request, page after page to the end (GitHub stops listing at 3,000). */
  async listPullFiles(fullName: string, number: number): Promise<{ files: GhPullFile[]; pages: number }> {
    const [owner, repo] = split(fullName);
    const files: GhPullFile[] = [];
    let pages = 0;
    const octokit = await this.#client();
    try {
      for await (const page of octokit.paginate.iterator('GET /repos/{owner}/{repo}/pulls/{pull_number}/files', {
        owner,
        repo,
        pull_number: number,
        per_page: 100,
      })) {
        pages += 1;
        files.push(...parse(ghPullFilesSchema, page.data, `files of ${fullName}#${number}`));
      }
    } catch (error) {
      throw mapGitHubError(error, `files of ${fullName}#${number}`);
    }
    return { files, pages };
  }

  /** Conversation comments of an issue or pull request. */
  async listIssueComments(fullName: string, number: number): Promise<GhComment[]> {
    const [owner, repo] = split(fullName);
    return this.#all(
      'GET /repos/{owner}/{repo}/issues/{issue_number}/comments',
      { owner, repo, issue_number: number, per_page: 100 },
      ghCommentsSchema,
      `comments of ${fullName}#${number}`,
    );
  }

  /** Review comments (on lines of the diff) of a pull request. */
  async listReviewComments(fullName: string, number: number): Promise<GhComment[]> {
    const [owner, repo] = split(fullName);
    return this.#all(
      'GET /repos/{owner}/{repo}/pulls/{pull_number}/comments',
      { owner, repo, pull_number: number, per_page: 100 },
      ghCommentsSchema,
      `review comments of ${fullName}#${number}`,
    );
  }

  /** An issue, or null when there is none (404, 410: deleted, or issues disabled). */
  async getIssue(fullName: string, number: number): Promise<GhIssue | null> {
    const [owner, repo] = split(fullName);
    return this.#getOrNull(
      'GET /repos/{owner}/{repo}/issues/{issue_number}',
      { owner, repo, issue_number: number },
      ghIssueSchema,
      `issue ${fullName}#${number}`,
    );
  }

  async getGitCommit(fullName: string, sha: string): Promise<GhGitCommit> {
    const [owner, repo] = split(fullName);
    return this.#get(
      'GET /repos/{owner}/{repo}/git/commits/{commit_sha}',
      { owner, repo, commit_sha: sha },
      ghGitCommitSchema,
      `commit ${fullName}@${sha}`,
    );
  }

  /** The unified diff base...head, or null when GitHub will not produce it (too large: 406/422). */
  async compareDiff(fullName: string, base: string, head: string): Promise<string | null> {
    const [owner, repo] = split(fullName);
    try {
      const octokit = await this.#client();
      const response = await octokit.request('GET /repos/{owner}/{repo}/compare/{basehead}', {
        owner,
        repo,
        basehead: `${base}...${head}`,
        mediaType: { format: 'diff' },
      });
      const data: unknown = response.data;
      if (typeof data !== 'string')
        throw new OutsideServiceError('github', 'github-bad-response', `diff of ${fullName} ${base}...${head}: expected text`);
      return data;
    } catch (error) {
      const status = statusOf(error);
      if (status === 406 || status === 422) return null;
      throw mapGitHubError(error, `diff of ${fullName} ${base}...${head}`);
    }
  }

  /** A tree (recursively when asked); `truncated` is GitHub's flag for trees too large to list. */
  async getTree(fullName: string, sha: string, recursive: boolean): Promise<GhTree> {
    const [owner, repo] = split(fullName);
    return this.#get(
      'GET /repos/{owner}/{repo}/git/trees/{tree_sha}',
      { owner, repo, tree_sha: sha, ...(recursive ? { recursive: '1' } : {}) },
      ghTreeSchema,
      `tree ${fullName}@${sha}`,
    );
  }

  /** A file's text at a ref, or null when the path does not exist there. */
  async getFileText(fullName: string, path: string, ref: string): Promise<string | null> {
    return (await this.getFileBytes(fullName, path, ref))?.toString('utf8') ?? null;
  }

  /** A file's bytes at a ref, or null when the path does not exist there. */
  async getFileBytes(fullName: string, path: string, ref: string): Promise<Buffer | null> {
    const [owner, repo] = split(fullName);
    const file = await this.#getOrNull(
      'GET /repos/{owner}/{repo}/contents/{path}',
      { owner, repo, path, ref },
      ghContentFileSchema.or(ghContentListSchema),
      `${fullName}:${path}@${ref}`,
    );
    if (file === null || Array.isArray(file)) return null;
    if (file.content !== undefined && file.encoding === 'base64') return Buffer.from(file.content, 'base64');
    // Files over 1 MB come without content: read the blob.
    const blob = await this.#get(
      'GET /repos/{owner}/{repo}/git/blobs/{file_sha}',
      { owner, repo, file_sha: file.sha },
      ghBlobSchema,
      `blob ${fullName}@${file.sha}`,
    );
    return blob.encoding === 'base64' ? Buffer.from(blob.content, 'base64') : Buffer.from(blob.content, 'utf8');
  }

  /** One page of a code search (`q` with qualifiers), paced by searchIntervalMs. */
  async searchCode(q: string, page: number, perPage = 100): Promise<CodeSearchPage> {
    const result = await this.#searchQueue.add(() =>
      this.#get('GET /search/code', { q, page, per_page: perPage }, ghCodeSearchSchema, `code search "${q}" page ${page}`),
    );
    return { totalCount: result.total_count, incomplete: result.incomplete_results, items: result.items };
  }

  /** Whether any token is configured (unauthenticated requests get 60 an hour and no code search). */
  get authenticated(): boolean {
    return this.#tokens > 0;
  }

  async #get<S extends z.ZodType>(route: string, params: Record<string, unknown>, schema: S, what: string): Promise<z.infer<S>> {
    let data: unknown;
    try {
      const octokit = await this.#client();
      data = (await octokit.request(route, params)).data;
    } catch (error) {
      throw mapGitHubError(error, what);
    }
    return parse(schema, data, what);
  }

  async #getOrNull<S extends z.ZodType>(
    route: string,
    params: Record<string, unknown>,
    schema: S,
    what: string,
  ): Promise<z.infer<S> | null> {
    try {
      return await this.#get(route, params, schema, what);
    } catch (error) {
      if (error instanceof OutsideServiceError && (error.status === 404 || error.status === 410)) return null;
      throw error;
    }
  }

  async #all<S extends z.ZodType<unknown[]>>(route: string, params: Record<string, unknown>, schema: S, what: string): Promise<z.infer<S>> {
    const out: unknown[] = [];
    const octokit = await this.#client();
    try {
      for await (const page of octokit.paginate.iterator(route, params)) out.push(...(parse(schema, page.data, what) as unknown[]));
    } catch (error) {
      throw mapGitHubError(error, what);
    }
    return out as z.infer<S>;
  }

  /** For logs: the adapter's logger. */
  get log(): Logger {
    return this.#log;
  }
}

/** A directory answers with a list of entries. */
const ghContentListSchema = z.array(z.unknown());

function split(fullName: string): [string, string] {
  const m = /^([^/\s]+)\/([^/\s]+)$/.exec(fullName);
  if (!m) throw new RangeError(`expected owner/name, got "${fullName}"`);
  return [m[1]!, m[2]!];
}

function parse<S extends z.ZodType>(schema: S, data: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue ? `${issue.path.map(String).join('.') || '(top)'}: ${issue.message}` : 'invalid';
  throw new OutsideServiceError('github', 'github-bad-response', `${what}: unexpected response from GitHub (${where})`, {
    retryable: true,
  });
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** Maps an Octokit failure to perfmine's closed error kinds. */
export function mapGitHubError(error: unknown, what: string): PerfmineError {
  if (error instanceof PerfmineError) return error;
  const status = statusOf(error);
  const e = error as { message?: string; name?: string; response?: { headers?: Record<string, string | undefined> } };
  const message = (e.message ?? String(error)).slice(0, 500);
  const headers = e.response?.headers ?? {};
  const causeName = (error as { cause?: { name?: string } }).cause?.name;
  if (e.name === 'AbortError' || e.name === 'TimeoutError' || causeName === 'TimeoutError' || causeName === 'AbortError') {
    return new OutsideServiceError('github', 'github-timeout', `${what}: GitHub did not answer in time`, { retryable: true, cause: error });
  }
  if (status === 401) {
    return new ConfigError(`GITHUB_TOKEN: GitHub refused the token (401 Bad credentials) while reading ${what}`, {
      reason: 'github-bad-credentials',
      fix: 'set GITHUB_TOKEN or GITHUB_TOKENS to valid tokens (classic or fine-grained, public repository read access)',
      cause: error,
    });
  }
  if (status === 404)
    return new OutsideServiceError('github', 'github-not-found', `${what}: not found on GitHub (404)`, { status, cause: error });
  if (status === 410) return new OutsideServiceError('github', 'github-gone', `${what}: gone from GitHub (410)`, { status, cause: error });
  if (
    (status === 403 || status === 429) &&
    (SECONDARY_RATE_RE.test(message) || headers['x-ratelimit-remaining'] === '0' || status === 429)
  ) {
    return new OutsideServiceError('github', 'github-rate-limited', `${what}: GitHub rate limit (${status}): ${message}`, {
      status,
      retryable: true,
      fix: 'add tokens to GITHUB_TOKENS, lower github.concurrency, or run again after the reset',
      cause: error,
    });
  }
  if (status === 403)
    return new OutsideServiceError('github', 'github-forbidden', `${what}: GitHub refused access (403): ${message}`, {
      status,
      cause: error,
    });
  if (status === 422)
    return new OutsideServiceError('github', 'github-unprocessable', `${what}: GitHub could not process the request (422): ${message}`, {
      status,
      cause: error,
    });
  if (status !== undefined && status >= 500) {
    const network = !(e.response && typeof e.response === 'object');
    return new OutsideServiceError(
      'github',
      network ? 'github-unreachable' : 'github-server-error',
      `${what}: ${network ? 'connection failed' : `GitHub server error (${status})`}: ${message}`,
      {
        status,
        retryable: true,
        cause: error,
      },
    );
  }
  return new OutsideServiceError('github', 'github-error', `${what}: ${message}`, {
    ...(status === undefined ? {} : { status }),
    cause: error,
  });
}
