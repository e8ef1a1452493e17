/**
 * A loopback stand-in for GitHub's REST API (node:http on 127.0.0.1, port 0). It serves data
 * given as plain objects through the real routes perfmine uses, with GitHub's wire behaviour:
 * `Link` pagination, ETag / 304 (a 304 does not count against the rate limit), `x-ratelimit-*`
 * headers per token and resource, 301 for renamed repositories, GitHub's 3,000-file cap on a
 * pull request's file list, the 1,000-result cap of search, and the 406 of a diff too large.
 *
 * Faults are injected per request (`inject`): a secondary rate limit (403/429 + retry-after), a
 * primary rate limit, any status (429, 502 ...), a connection reset, a truncated JSON body, no
 * answer at all.
 * Every request is logged (method, path, conditional or not, status, token) so that tests can
 * count them.
 *
 *   const gh = await FakeGitHub.start({ repos: [repo] });   // gh.url → Octokit baseUrl
 *   gh.inject({ path: /\/pulls\/7$/, fault: { kind: 'status', status: 502 } });
 *   ...; gh.requests().filter((r) => r.conditional); await gh.close();
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeComment {
  readonly user: string;
  readonly body: string;
  readonly createdAt: string;
  readonly authorAssociation?: string;
  /** Review comments: the file commented on. */
  readonly path?: string | null;
}

export interface FakeFile {
  readonly filename: string;
  readonly status?: 'added' | 'removed' | 'modified' | 'renamed' | 'copied' | 'changed' | 'unchanged';
  readonly additions: number;
  readonly deletions: number;
  /** The hunk text GitHub shows (`@@ ...`); absent for binary or very large files. */
  readonly patch?: string | null;
  readonly previousFilename?: string;
}

export interface FakePull {
  readonly number: number;
  readonly title: string;
  readonly body?: string | null;
  readonly user?: string;
  readonly authorAssociation?: string;
  readonly labels?: readonly string[];
  /** Default: closed. */
  readonly state?: 'open' | 'closed';
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly closedAt?: string | null;
  readonly mergedAt: string | null;
  /** Default: the repository's default branch. */
  readonly baseRef?: string;
  readonly headSha: string;
  /** The merge (or squash) commit; null when not merged. */
  readonly mergeSha: string | null;
  /** The merge commit's first parent (also served as `base.sha`). */
  readonly baseSha: string;
  /** Parents of the merge commit; default [baseSha, headSha]. */
  readonly mergeParents?: readonly string[];
  /** The files, or a function that makes them when first asked (for large synthetic data). */
  readonly files?: readonly FakeFile[] | (() => readonly FakeFile[]);
  /** Total changed files GitHub reports (default: the number of files). */
  readonly changedFiles?: number;
  readonly comments?: readonly FakeComment[];
  readonly reviewComments?: readonly FakeComment[];
  /** The diff base...merge; default: assembled from the files' patches. */
  readonly diff?: string;
}

export interface FakeIssue {
  readonly number: number;
  readonly title: string;
  readonly body?: string | null;
  readonly user?: string;
  readonly state?: 'open' | 'closed';
  readonly labels?: readonly string[];
  readonly createdAt: string;
  readonly comments?: readonly FakeComment[];
}

export interface FakeRepo {
  readonly fullName: string;
  readonly id?: number;
  readonly stars?: number;
  readonly forks?: number;
  readonly fork?: boolean;
  readonly archived?: boolean;
  readonly disabled?: boolean;
  readonly pushedAt?: string;
  readonly defaultBranch?: string;
  readonly language?: string | null;
  /** Old names: requests to them answer 301 to `/repositories/{id}`. */
  readonly formerNames?: readonly string[];
  /** The tree (path → content: text, or bytes for binary files) at every commit, unless `trees` has the commit. */
  readonly files?: Readonly<Record<string, FileContent>>;
  /** Trees of particular commits (or branch names). */
  readonly trees?: Readonly<Record<string, Readonly<Record<string, FileContent>>>>;
  readonly pulls?: readonly FakePull[];
  readonly issues?: readonly FakeIssue[];
}

/** A file's content: text (served as UTF-8) or bytes. */
export type FileContent = string | Uint8Array;

export type Fault =
  | { readonly kind: 'secondary-rate-limit'; readonly status?: 403 | 429; readonly retryAfter?: number }
  | { readonly kind: 'rate-limit' }
  | { readonly kind: 'status'; readonly status: number; readonly body?: unknown; readonly headers?: Readonly<Record<string, string>> }
  | { readonly kind: 'reset' }
  | { readonly kind: 'truncate' }
  /** Never answers (until the server closes): for client timeouts. */
  | { readonly kind: 'hang' };

export interface FaultRule {
  readonly fault: Fault;
  /** Matches the path (with query): a prefix string or a regular expression. Default: any. */
  readonly path?: string | RegExp;
  readonly method?: string;
  /** How many matching requests get the fault (default 1). */
  readonly times?: number;
}

export interface LoggedRequest {
  readonly method: string;
  /** Path with query string, as received. */
  readonly path: string;
  /** Sent with If-None-Match or If-Modified-Since. */
  readonly conditional: boolean;
  /** 0 for a connection reset. */
  readonly status: number;
  readonly token: string | null;
  readonly fault: Fault['kind'] | null;
}

/** What `onRequest` listeners see of a request. */
export interface ArrivingRequest {
  readonly method: string;
  /** Path with query string. */
  readonly path: string;
  /** 1-based arrival order since the server started. */
  readonly index: number;
}

export type RequestListener = (request: ArrivingRequest) => Fault | null | undefined;

export interface FakeGitHubOptions {
  readonly repos?: readonly FakeRepo[];
  /** Requests per window and resource for each token (and for anonymous callers: `core` 60). */
  readonly limits?: Partial<Record<'core' | 'search' | 'code_search', number>>;
  /** Per-token `core` budgets that override `limits.core` (to exhaust one token in a test). */
  readonly tokenBudgets?: Readonly<Record<string, number>>;
  /** Seconds until a spent budget is reset (x-ratelimit-reset). */
  readonly resetAfterSeconds?: number;
  /** GitHub lists at most 3,000 files of a pull request. */
  readonly filesCap?: number;
  /** A diff with more files than this is refused with 406 (GitHub: 300). */
  readonly diffFileLimit?: number;
  /** Search results reachable per query (GitHub: 1,000). */
  readonly searchCap?: number;
}

interface RepoState {
  readonly repo: FakeRepo;
  readonly id: number;
  readonly pulls: Map<number, FakePull>;
  readonly pullsSorted: FakePull[];
  readonly issues: Map<number, FakeIssue>;
  readonly commits: Map<string, { parents: string[] }>;
  readonly filesCache: Map<number, readonly FakeFile[]>;
}

interface Reply {
  readonly status: number;
  readonly json?: unknown;
  readonly text?: string;
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
  /** Items to paginate (per_page / page from the query, Link header). */
  readonly items?: readonly unknown[];
  readonly itemsCap?: number;
  readonly lastModified?: string;
}

type Handler = (m: RegExpExecArray, url: URL, req: IncomingMessage, repo: RepoState | null) => Reply;

const DOCS = 'https://docs.github.com/rest';

export class FakeGitHub {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #repos = new Map<string, RepoState>();
  readonly #byId = new Map<number, RepoState>();
  readonly #aliases = new Map<string, RepoState>();
  readonly #faults: { rule: FaultRule; left: number }[] = [];
  readonly #log: LoggedRequest[] = [];
  readonly #budgets = new Map<string, { remaining: number; reset: number }>();
  readonly #options: FakeGitHubOptions;
  readonly #routes: [string, RegExp, Handler][];
  #listener: RequestListener | null = null;
  #received = 0;
  #nextId = 1000;
  url = '';

  private constructor(options: FakeGitHubOptions) {
    this.#options = options;
    this.#server = createServer((req, res) => this.#handle(req, res));
    this.#server.on('connection', (s) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    this.#routes = this.#makeRoutes();
    for (const repo of options.repos ?? []) this.addRepo(repo);
  }

  static async start(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
    const gh = new FakeGitHub(options);
    await new Promise<void>((resolve) => gh.#server.listen(0, '127.0.0.1', resolve));
    gh.url = `http://127.0.0.1:${(gh.#server.address() as AddressInfo).port}`;
    return gh;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Adds (or replaces) a repository. */
  addRepo(repo: FakeRepo): void {
    const key = repo.fullName.toLowerCase();
    const old = this.#repos.get(key);
    const id = repo.id ?? old?.id ?? this.#nextId++;
    const pulls = new Map((repo.pulls ?? []).map((p) => [p.number, p]));
    const commits = new Map<string, { parents: string[] }>();
    for (const p of repo.pulls ?? []) {
      if (p.mergeSha) commits.set(p.mergeSha, { parents: [...(p.mergeParents ?? [p.baseSha, p.headSha])] });
    }
    const state: RepoState = {
      repo,
      id,
      pulls,
      pullsSorted: [...pulls.values()],
      issues: new Map((repo.issues ?? []).map((i) => [i.number, i])),
      commits,
      filesCache: new Map(),
    };
    this.#repos.set(key, state);
    this.#byId.set(id, state);
    for (const former of repo.formerNames ?? []) this.#aliases.set(former.toLowerCase(), state);
  }

  /** Replaces one pull request of a repository (e.g. to make it "updated"). */
  updatePull(fullName: string, pull: FakePull): void {
    const state = this.#repos.get(fullName.toLowerCase());
    if (!state) throw new RangeError(`no repository ${fullName}`);
    const pulls = (state.repo.pulls ?? []).filter((p) => p.number !== pull.number);
    this.addRepo({ ...state.repo, id: state.id, pulls: [...pulls, pull] });
  }

  /**
   * Called with every request as it arrives, before it is answered (1-based arrival order); a
   * fault it returns is served to that request. Kill tests hold the k-th request (`hang`) and
   * kill the client while it waits. Null removes the listener.
   */
  onRequest(listener: RequestListener | null): void {
    this.#listener = listener;
  }

  inject(rule: FaultRule): void {
    this.#faults.push({ rule, left: rule.times ?? 1 });
  }

  /** The request log, optionally filtered. */
  requests(filter?: (r: LoggedRequest) => boolean): LoggedRequest[] {
    return filter ? this.#log.filter(filter) : [...this.#log];
  }

  clearLog(): void {
    this.#log.length = 0;
  }

  /** Faults injected but not yet served. */
  pendingFaults(): number {
    return this.#faults.reduce((n, f) => n + f.left, 0);
  }

  // ---------------------------------------------------------------- request handling

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    const method = req.method ?? 'GET';
    const token = tokenOf(req);
    const conditional = req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined;
    const pathWithQuery = `${url.pathname}${url.search}`;
    const log = (status: number, fault: Fault['kind'] | null) =>
      this.#log.push({ method, path: pathWithQuery, conditional, status, token, fault });
    const resource = url.pathname.startsWith('/search/code') ? 'code_search' : url.pathname.startsWith('/search/') ? 'search' : 'core';

    this.#received += 1;
    const fault = this.#listener?.({ method, path: pathWithQuery, index: this.#received }) ?? this.#takeFault(method, pathWithQuery);
    if (fault) {
      this.#serveFault(fault, res, token, resource, log);
      return;
    }

    const budget = this.#budget(token, resource);
    if (budget.remaining <= 0) {
      const body = JSON.stringify({
        message: `API rate limit exceeded for ${token ? 'user' : '127.0.0.1'}.`,
        documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api`,
      });
      res.writeHead(403, { 'content-type': 'application/json; charset=utf-8', ...this.#rateHeaders(token, resource) });
      res.end(body);
      log(403, null);
      return;
    }

    let reply: Reply;
    try {
      reply = this.#route(method, url, req);
    } catch (error) {
      reply = { status: 500, json: { message: `fake server error: ${(error as Error).message}` } };
    }
    if (reply.status === 301) {
      res.writeHead(301, {
        location: reply.headers?.location ?? '',
        'content-type': 'application/json; charset=utf-8',
        ...this.#rateHeaders(token, resource),
      });
      res.end(JSON.stringify(reply.json));
      log(301, null);
      return;
    }

    let bodyText: string;
    const headers: Record<string, string> = { ...(reply.headers ?? {}) };
    if (reply.items !== undefined) {
      const { page, link } = paginate(reply.items, url, this.url, reply.itemsCap);
      if (link) headers.link = link;
      bodyText = JSON.stringify(page);
    } else if (reply.text !== undefined) {
      bodyText = reply.text;
    } else {
      bodyText = JSON.stringify(reply.json ?? {});
    }
    const contentType = reply.contentType ?? 'application/json; charset=utf-8';
    if (reply.status === 200) {
      const etag = `W/"${createHash('sha1').update(bodyText).digest('hex')}"`;
      headers.etag = etag;
      if (reply.lastModified) headers['last-modified'] = new Date(reply.lastModified).toUTCString();
      if (req.headers['if-none-match'] === etag) {
        // GitHub: a 304 to an authorized conditional request does not count against the limit.
        res.writeHead(304, { etag, ...this.#rateHeaders(token, resource) });
        res.end();
        log(304, null);
        return;
      }
    }
    budget.remaining -= 1;
    res.writeHead(reply.status, { 'content-type': contentType, ...headers, ...this.#rateHeaders(token, resource) });
    res.end(bodyText);
    log(reply.status, null);
  }

  #takeFault(method: string, path: string): Fault | null {
    for (const f of this.#faults) {
      if (f.left <= 0) continue;
      const r = f.rule;
      if (r.method && r.method.toUpperCase() !== method) continue;
      if (r.path !== undefined && !(typeof r.path === 'string' ? path.startsWith(r.path) : r.path.test(path))) continue;
      f.left -= 1;
      return r.fault;
    }
    return null;
  }

  #serveFault(
    fault: Fault,
    res: ServerResponse,
    token: string | null,
    resource: string,
    log: (status: number, fault: Fault['kind'] | null) => void,
  ): void {
    const json = 'application/json; charset=utf-8';
    switch (fault.kind) {
      case 'secondary-rate-limit': {
        const status = fault.status ?? 403;
        res.writeHead(status, {
          'content-type': json,
          'retry-after': String(fault.retryAfter ?? 1),
          ...this.#rateHeaders(token, resource),
        });
        res.end(
          JSON.stringify({
            message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
            documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits`,
          }),
        );
        log(status, fault.kind);
        return;
      }
      case 'rate-limit': {
        const budget = this.#budget(token, resource);
        budget.remaining = 0;
        res.writeHead(403, { 'content-type': json, ...this.#rateHeaders(token, resource) });
        res.end(
          JSON.stringify({
            message: 'API rate limit exceeded for user ID 1.',
            documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api`,
          }),
        );
        log(403, fault.kind);
        return;
      }
      case 'status': {
        res.writeHead(fault.status, { 'content-type': json, ...(fault.headers ?? {}), ...this.#rateHeaders(token, resource) });
        res.end(JSON.stringify(fault.body ?? { message: fault.status >= 500 ? 'Server Error' : `Error ${fault.status}` }));
        log(fault.status, fault.kind);
        return;
      }
      case 'reset':
        log(0, fault.kind);
        res.socket?.destroy();
        return;
      case 'hang':
        log(0, fault.kind);
        return;
      case 'truncate': {
        // Half a JSON document, cleanly ended: what a proxy that gives up half-way leaves.
        res.writeHead(200, { 'content-type': json, ...this.#rateHeaders(token, resource) });
        res.end('{"id": 1, "full_name": "trunc');
        log(200, fault.kind);
        return;
      }
    }
  }

  #budget(token: string | null, resource: string): { remaining: number; reset: number } {
    const key = `${token ?? ''}\u0000${resource}`;
    let b = this.#budgets.get(key);
    const now = Math.floor(Date.now() / 1000);
    if (!b || b.reset <= now) {
      b = { remaining: this.#limit(token, resource), reset: now + (this.#options.resetAfterSeconds ?? 3600) };
      this.#budgets.set(key, b);
    }
    return b;
  }

  #limit(token: string | null, resource: string): number {
    if (token === null) return resource === 'core' ? 60 : 10;
    if (resource === 'core' && this.#options.tokenBudgets?.[token] !== undefined) return this.#options.tokenBudgets[token]!;
    const limits = this.#options.limits ?? {};
    return resource === 'core' ? (limits.core ?? 5000) : resource === 'search' ? (limits.search ?? 30) : (limits.code_search ?? 1000);
  }

  #rateHeaders(token: string | null, resource: string): Record<string, string> {
    const b = this.#budget(token, resource);
    const limit = this.#limit(token, resource);
    return {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(0, b.remaining)),
      'x-ratelimit-used': String(limit - Math.max(0, b.remaining)),
      'x-ratelimit-reset': String(b.reset),
      'x-ratelimit-resource': resource,
    };
  }

  // ---------------------------------------------------------------- routes

  #route(method: string, url: URL, req: IncomingMessage): Reply {
    if (method !== 'GET') return { status: 404, json: { message: 'Not Found', documentation_url: DOCS } };
    let path = url.pathname;
    let repo: RepoState | null = null;
    const byName = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    const byId = /^\/repositories\/(\d+)(\/.*)?$/.exec(path);
    if (byName) {
      const name = `${decodeURIComponent(byName[1]!)}/${decodeURIComponent(byName[2]!)}`.toLowerCase();
      repo = this.#repos.get(name) ?? null;
      if (!repo) {
        const moved = this.#aliases.get(name);
        if (moved) {
          const location = `${this.url}/repositories/${moved.id}${byName[3] ?? ''}${url.search}`;
          return {
            status: 301,
            headers: { location },
            json: { message: 'Moved Permanently', url: location, documentation_url: `${DOCS}#http-redirects` },
          };
        }
        return notFound();
      }
      path = `/repo${byName[3] ?? ''}`;
    } else if (byId) {
      repo = this.#byId.get(Number(byId[1])) ?? null;
      if (!repo) return notFound();
      path = `/repo${byId[2] ?? ''}`;
    }
    for (const [, re, handler] of this.#routes) {
      const m = re.exec(path);
      if (m && (repo !== null) === path.startsWith('/repo')) return handler(m, url, req, repo);
    }
    return notFound();
  }

  #makeRoutes(): [string, RegExp, Handler][] {
    return [
      [
        'repo',
        /^\/repo$/,
        (_m, _u, _r, s) => ({ status: 200, json: this.#repoJson(s!), lastModified: s!.repo.pushedAt ?? '2025-01-01T00:00:00Z' }),
      ],
      ['pulls', /^\/repo\/pulls$/, (_m, u, _r, s) => ({ status: 200, items: this.#listPulls(s!, u) })],
      [
        'pull',
        /^\/repo\/pulls\/(\d+)$/,
        (m, _u, _r, s) => {
          const p = s!.pulls.get(Number(m[1]));
          return p ? { status: 200, json: this.#pullJson(s!, p, true) } : notFound();
        },
      ],
      [
        'pull-files',
        /^\/repo\/pulls\/(\d+)\/files$/,
        (m, _u, _r, s) => {
          const p = s!.pulls.get(Number(m[1]));
          if (!p) return notFound();
          return { status: 200, items: this.#files(s!, p).map(fileJson), itemsCap: this.#options.filesCap ?? 3000 };
        },
      ],
      [
        'pull-comments',
        /^\/repo\/pulls\/(\d+)\/comments$/,
        (m, _u, _r, s) => {
          const p = s!.pulls.get(Number(m[1]));
          return p ? { status: 200, items: (p.reviewComments ?? []).map((c, i) => commentJson(c, i)) } : notFound();
        },
      ],
      [
        'issue',
        /^\/repo\/issues\/(\d+)$/,
        (m, _u, _r, s) => {
          const n = Number(m[1]);
          const issue = s!.issues.get(n);
          if (issue) return { status: 200, json: this.#issueJson(s!, issue) };
          const p = s!.pulls.get(n);
          return p
            ? {
                status: 200,
                json: {
                  ...this.#issueJson(s!, {
                    number: p.number,
                    title: p.title,
                    body: p.body ?? null,
                    createdAt: p.createdAt,
                    ...(p.user ? { user: p.user } : {}),
                  }),
                  pull_request: { url: `${this.url}/repos/${s!.repo.fullName}/pulls/${n}` },
                },
              }
            : notFound();
        },
      ],
      [
        'issue-comments',
        /^\/repo\/issues\/(\d+)\/comments$/,
        (m, _u, _r, s) => {
          const n = Number(m[1]);
          const list = s!.issues.get(n)?.comments ?? s!.pulls.get(n)?.comments;
          return list ? { status: 200, items: list.map((c, i) => commentJson(c, i)) } : notFound();
        },
      ],
      [
        'git-commit',
        /^\/repo\/git\/commits\/([0-9a-f]+)$/,
        (m, _u, _r, s) => {
          const c = s!.commits.get(m[1]!);
          return c ? { status: 200, json: { sha: m[1], parents: c.parents.map((sha) => ({ sha })), message: 'merge' } } : notFound();
        },
      ],
      [
        'compare',
        /^\/repo\/compare\/([0-9A-Za-z_./-]+)\.\.\.([0-9A-Za-z_./-]+)$/,
        (m, _u, req, s) => {
          const pull = s!.pullsSorted.find((p) => p.baseSha === m[1] && p.mergeSha === m[2]);
          if (!pull) return notFound();
          const accept = String(req.headers.accept ?? '');
          if (!accept.includes('diff')) return { status: 200, json: { status: 'ahead', files: [] } };
          const files = this.#files(s!, pull);
          if (pull.diff === undefined && files.length > (this.#options.diffFileLimit ?? 300)) {
            return {
              status: 406,
              json: {
                message: `Sorry, the diff exceeded the maximum number of files (${this.#options.diffFileLimit ?? 300}). Consider using 'List pull requests files' API or locally cloning the repository instead.`,
                errors: [{ resource: 'PullRequest', field: 'diff', code: 'too_large' }],
                documentation_url: DOCS,
              },
            };
          }
          return { status: 200, text: pull.diff ?? diffFromFiles(files), contentType: 'text/plain; charset=utf-8' };
        },
      ],
      [
        'tree',
        /^\/repo\/git\/trees\/(.+)$/,
        (m, u, _r, s) => {
          const tree = this.#tree(s!, decodeURIComponent(m[1]!));
          if (!tree) return notFound();
          return { status: 200, json: treeJson(m[1]!, tree, u.searchParams.get('recursive') !== null) };
        },
      ],
      [
        'contents',
        /^\/repo\/contents\/(.+)$/,
        (m, u, _r, s) => {
          const tree = this.#tree(s!, u.searchParams.get('ref') ?? s!.repo.defaultBranch ?? 'main');
          const path = decodeURIComponent(m[1]!);
          const content = tree?.[path];
          if (content === undefined) return notFound();
          return {
            status: 200,
            json: {
              type: 'file',
              path,
              name: path.split('/').pop(),
              sha: blobSha(content),
              size: Buffer.byteLength(content),
              encoding: 'base64',
              content: Buffer.from(content).toString('base64'),
            },
          };
        },
      ],
      ['search-code', /^\/search\/code$/, (_m, u) => this.#searchCode(u)],
    ];
  }

  #tree(s: RepoState, ref: string): Readonly<Record<string, FileContent>> | null {
    return s.repo.trees?.[ref] ?? s.repo.files ?? null;
  }

  #files(s: RepoState, p: FakePull): readonly FakeFile[] {
    let files = s.filesCache.get(p.number);
    if (!files) {
      files = typeof p.files === 'function' ? p.files() : (p.files ?? []);
      s.filesCache.set(p.number, files);
    }
    return files;
  }

  #repoJson(s: RepoState): unknown {
    const r = s.repo;
    const [owner] = r.fullName.split('/');
    return {
      id: s.id,
      node_id: `R_${s.id}`,
      name: r.fullName.split('/')[1],
      full_name: r.fullName,
      owner: { login: owner, id: s.id + 1 },
      private: false,
      html_url: `https://github.com/${r.fullName}`,
      fork: r.fork ?? false,
      archived: r.archived ?? false,
      disabled: r.disabled ?? false,
      stargazers_count: r.stars ?? 0,
      watchers_count: r.stars ?? 0,
      forks_count: r.forks ?? 0,
      default_branch: r.defaultBranch ?? 'main',
      pushed_at: r.pushedAt ?? '2025-01-01T00:00:00Z',
      updated_at: r.pushedAt ?? '2025-01-01T00:00:00Z',
      created_at: '2015-01-01T00:00:00Z',
      language: r.language === undefined ? 'Python' : r.language,
    };
  }

  #listPulls(s: RepoState, u: URL): unknown[] {
    const state = u.searchParams.get('state') ?? 'open';
    const base = u.searchParams.get('base');
    const sort = u.searchParams.get('sort') ?? 'created';
    const direction = u.searchParams.get('direction') ?? (sort === 'created' ? 'desc' : 'asc');
    const def = s.repo.defaultBranch ?? 'main';
    const key = sort === 'updated' ? (p: FakePull) => p.updatedAt : (p: FakePull) => p.createdAt;
    return s.pullsSorted
      .filter((p) => (state === 'all' || (p.state ?? 'closed') === state) && (base === null || (p.baseRef ?? def) === base))
      .sort(
        (a, b) =>
          (Date.parse(key(a)) - Date.parse(key(b))) * (direction === 'asc' ? 1 : -1) ||
          (a.number - b.number) * (direction === 'asc' ? 1 : -1),
      )
      .map((p) => this.#pullJson(s, p, false));
  }

  #pullJson(s: RepoState, p: FakePull, full: boolean): unknown {
    const def = s.repo.defaultBranch ?? 'main';
    const json: Record<string, unknown> = {
      url: `${this.url}/repos/${s.repo.fullName}/pulls/${p.number}`,
      id: s.id * 100_000 + p.number,
      html_url: `https://github.com/${s.repo.fullName}/pull/${p.number}`,
      number: p.number,
      state: p.state ?? 'closed',
      title: p.title,
      user: { login: p.user ?? 'contributor' },
      body: p.body ?? null,
      labels: (p.labels ?? []).map((name, i) => ({ id: i + 1, name })),
      created_at: p.createdAt,
      updated_at: p.updatedAt,
      closed_at: p.closedAt ?? p.mergedAt,
      merged_at: p.mergedAt,
      merge_commit_sha: p.mergeSha,
      author_association: p.authorAssociation ?? 'CONTRIBUTOR',
      head: { ref: `feature-${p.number}`, sha: p.headSha, repo: null },
      base: { ref: p.baseRef ?? def, sha: p.baseSha },
    };
    if (full) {
      const files = this.#files(s, p);
      json.merged = p.mergedAt !== null;
      json.comments = (p.comments ?? []).length;
      json.review_comments = (p.reviewComments ?? []).length;
      json.commits = 1;
      json.additions = files.reduce((n, f) => n + f.additions, 0);
      json.deletions = files.reduce((n, f) => n + f.deletions, 0);
      json.changed_files = p.changedFiles ?? files.length;
    }
    return json;
  }

  #issueJson(s: RepoState, i: FakeIssue): Record<string, unknown> {
    return {
      url: `${this.url}/repos/${s.repo.fullName}/issues/${i.number}`,
      repository_url: `${this.url}/repos/${s.repo.fullName}`,
      number: i.number,
      title: i.title,
      body: i.body ?? null,
      state: i.state ?? 'open',
      user: { login: i.user ?? 'reporter' },
      labels: (i.labels ?? []).map((name, k) => ({ id: k + 1, name })),
      created_at: i.createdAt,
      updated_at: i.createdAt,
      comments: (i.comments ?? []).length,
    };
  }

  #searchCode(u: URL): Reply {
    const q = u.searchParams.get('q') ?? '';
    const query = parseSearchQuery(q);
    const hits: { repo: RepoState; path: string; size: number }[] = [];
    for (const s of this.#repos.values()) {
      if (query.fork === false && s.repo.fork) continue;
      const tree = this.#tree(s, s.repo.defaultBranch ?? 'main');
      if (!tree) continue;
      for (const [path, content] of Object.entries(tree)) {
        const name = path.split('/').pop() ?? path;
        if (query.filename !== null && name !== query.filename) continue;
        const size = Buffer.byteLength(content);
        if (size < query.minSize || size > query.maxSize) continue;
        hits.push({ repo: s, path, size });
      }
    }
    hits.sort((a, b) => a.repo.id - b.repo.id || (a.path < b.path ? -1 : 1));
    const perPage = Math.min(100, Number(u.searchParams.get('per_page') ?? 30));
    const page = Number(u.searchParams.get('page') ?? 1);
    const cap = this.#options.searchCap ?? 1000;
    if ((page - 1) * perPage >= cap && hits.length > 0) {
      return {
        status: 422,
        json: { message: `Only the first ${cap} search results are available`, documentation_url: `${DOCS}/search/search` },
      };
    }
    const slice = hits.slice((page - 1) * perPage, Math.min(page * perPage, cap));
    const lastPage = Math.max(1, Math.ceil(Math.min(hits.length, cap) / perPage));
    const headers: Record<string, string> = {};
    const links: string[] = [];
    const at = (n: number) => {
      const next = new URL(u.toString().replace(u.origin, this.url));
      next.searchParams.set('page', String(n));
      return `<${next.toString()}>`;
    };
    if (page < lastPage) links.push(`${at(page + 1)}; rel="next"`, `${at(lastPage)}; rel="last"`);
    if (page > 1) links.push(`${at(page - 1)}; rel="prev"`, `${at(1)}; rel="first"`);
    if (links.length > 0) headers.link = links.join(', ');
    return {
      status: 200,
      headers,
      json: {
        total_count: hits.length,
        incomplete_results: false,
        items: slice.map((h) => ({
          name: h.path.split('/').pop(),
          path: h.path,
          sha: blobSha(h.path),
          url: `${this.url}/repositories/${h.repo.id}/contents/${h.path}`,
          html_url: `https://github.com/${h.repo.repo.fullName}/blob/main/${h.path}`,
          repository: { id: h.repo.id, full_name: h.repo.repo.fullName, fork: h.repo.repo.fork ?? false },
          score: 1,
        })),
      },
    };
  }
}

// ------------------------------------------------------------------ helpers (pure)

function notFound(): Reply {
  return { status: 404, json: { message: 'Not Found', documentation_url: DOCS } };
}

function tokenOf(req: IncomingMessage): string | null {
  const auth = req.headers.authorization;
  if (!auth) return null;
  const m = /^(?:token|bearer)\s+(.+)$/i.exec(auth);
  return m ? m[1]! : null;
}

/** One page of `items` as asked by `per_page` / `page`, and GitHub's Link header. */
function paginate(items: readonly unknown[], url: URL, origin: string, cap = Infinity): { page: unknown[]; link: string | null } {
  const perPage = Math.max(1, Math.min(100, Number(url.searchParams.get('per_page') ?? 30)));
  const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
  const visible = Math.min(items.length, cap);
  const lastPage = Math.max(1, Math.ceil(visible / perPage));
  const slice = items.slice((page - 1) * perPage, Math.min(page * perPage, visible));
  const at = (n: number) => {
    const next = new URL(`${origin}${url.pathname}${url.search}`);
    next.searchParams.set('page', String(n));
    return `<${next.toString()}>`;
  };
  const links: string[] = [];
  if (page < lastPage) links.push(`${at(page + 1)}; rel="next"`, `${at(lastPage)}; rel="last"`);
  if (page > 1) links.push(`${at(page - 1)}; rel="prev"`, `${at(1)}; rel="first"`);
  return { page: slice, link: links.length > 0 ? links.join(', ') : null };
}

function fileJson(f: FakeFile): unknown {
  return {
    sha: blobSha(f.filename),
    filename: f.filename,
    status: f.status ?? 'modified',
    additions: f.additions,
    deletions: f.deletions,
    changes: f.additions + f.deletions,
    ...(f.patch ? { patch: f.patch } : {}),
    ...(f.previousFilename ? { previous_filename: f.previousFilename } : {}),
  };
}

function commentJson(c: FakeComment, i: number): unknown {
  return {
    id: i + 1,
    user: { login: c.user },
    author_association: c.authorAssociation ?? 'NONE',
    body: c.body,
    created_at: c.createdAt,
    updated_at: c.createdAt,
    ...(c.path !== undefined ? { path: c.path } : {}),
  };
}

function treeJson(sha: string, files: Readonly<Record<string, FileContent>>, recursive: boolean): unknown {
  const entries = new Map<string, { path: string; mode: string; type: string; sha: string; size?: number }>();
  for (const [path, content] of Object.entries(files)) {
    const parts = path.split('/');
    if (!recursive && parts.length > 1) {
      entries.set(parts[0]!, { path: parts[0]!, mode: '040000', type: 'tree', sha: blobSha(parts[0]!) });
      continue;
    }
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      entries.set(dir, { path: dir, mode: '040000', type: 'tree', sha: blobSha(dir) });
    }
    entries.set(path, { path, mode: '100644', type: 'blob', sha: blobSha(content), size: Buffer.byteLength(content) });
  }
  return { sha, truncated: false, tree: [...entries.values()].sort((a, b) => (a.path < b.path ? -1 : 1)) };
}

function blobSha(content: FileContent): string {
  return createHash('sha1').update(content).digest('hex');
}

/** The diff GitHub would show, from each file's patch (files without one appear as binary). */
export function diffFromFiles(files: readonly FakeFile[]): string {
  return files
    .map((f) => {
      const from = f.previousFilename ?? f.filename;
      const head = `diff --git a/${from} b/${f.filename}\n`;
      if (!f.patch) return `${head}Binary files a/${from} and b/${f.filename} differ\n`;
      const minus = f.status === 'added' ? '/dev/null' : `a/${from}`;
      const plus = f.status === 'removed' ? '/dev/null' : `b/${f.filename}`;
      return `${head}--- ${minus}\n+++ ${plus}\n${f.patch}\n`;
    })
    .join('');
}

interface SearchQuery {
  filename: string | null;
  minSize: number;
  maxSize: number;
  fork: boolean | null;
}

/** The qualifiers of a code search this fake understands: filename, size (a..b, >=, <=, >, <), fork. */
export function parseSearchQuery(q: string): SearchQuery {
  const out: SearchQuery = { filename: null, minSize: 0, maxSize: Infinity, fork: null };
  for (const term of q.split(/\s+/)) {
    const [key, value] = term.split(':', 2) as [string, string | undefined];
    if (value === undefined) continue;
    if (key === 'filename') out.filename = value;
    if (key === 'fork') out.fork = value === 'true' || value === 'only';
    if (key === 'size') {
      const range = /^(\d+)\.\.(\d+)$/.exec(value);
      const cmp = /^(>=|<=|>|<)(\d+)$/.exec(value);
      if (range) {
        out.minSize = Number(range[1]);
        out.maxSize = Number(range[2]);
      } else if (cmp) {
        const n = Number(cmp[2]);
        if (cmp[1] === '>=') out.minSize = n;
        if (cmp[1] === '>') out.minSize = n + 1;
        if (cmp[1] === '<=') out.maxSize = n;
        if (cmp[1] === '<') out.maxSize = n - 1;
      } else if (/^\d+$/.test(value)) {
        out.minSize = out.maxSize = Number(value);
      }
    }
  }
  return out;
}
