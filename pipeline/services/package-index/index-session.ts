import { createHash, type Hash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../logging.js';
import { filterPage, type FilteredPage } from './cutoff-filter.js';
import { normalizeProjectName, parseDistributionFilename } from './distribution-filename.js';
import { indexFailure, indexFailureReason } from './index-failure.js';
import { preferredHash, type IndexFile } from './index-page.js';
import { chooseFormat, type PageFormat } from './negotiate.js';
import { renderProjectList, renderProjectPage } from './render-page.js';
import type { FileBody, Upstream } from './upstream.js';

/**
 * One build's time machine at work: the HTTP routes (`/simple/`, `/simple/<project>/`,
 * `/files/<project>/<filename>`), the filtered page of each project (fetched once per build),
 * the files served and the problems met. `time-machine.ts` starts and stops it.
 */

/** What a session needs of the time machine's options. */
export interface SessionOptions {
  readonly cutoff: Date | null;
  readonly missingUploadTime?: 'exclude' | 'include';
  readonly log: Logger;
  /** Given the bytes of each file once it is served whole and checked (the first time it is served to this build). */
  readonly keep?: ((file: ServedFile, bytes: Buffer) => void) | null;
}

/** One file the time machine served to this build (its bytes had the listed hash). */
export interface ServedFile {
  /** Normalized project name. */
  readonly project: string;
  /** From the file name; null when the name is not a wheel's, sdist's or egg's. */
  readonly version: string | null;
  readonly filename: string;
  /** Of the bytes served, computed while they passed. */
  readonly sha256: string;
  /** Where the upstream has it. */
  readonly url: string;
  readonly uploadTime: string | null;
}

/** Something that went wrong, or was left out, while serving this build. */
export interface IndexProblem {
  /**
   * `upstream-unreachable`, `upstream-timeout`, `upstream-status-<N>`, `upstream-invalid`,
   * `hash-mismatch`, `file-not-listed` (index-failure.ts); `upload-time-missing` (files left out,
   * or let in, for want of an upload time); `hash-missing` (a file served unchecked: the index
   * listed no hash); `keep-failed` (a file served whose bytes could not be stored); `internal`.
   */
  readonly reason: string;
  readonly project: string | null;
  readonly filename: string | null;
  readonly message: string;
  /** The request it happened to was answered with an error, or its transfer aborted. */
  readonly refused: boolean;
}

/** The state of one build's time machine: filtered pages, files served, problems. */
export class Session {
  readonly problemList: IndexProblem[] = [];
  readonly #served = new Map<string, ServedFile>();
  readonly #pages = new Map<string, Promise<FilteredPage>>();
  readonly #upstream: Upstream;
  readonly #options: SessionOptions;
  readonly #log: Logger;

  constructor(upstream: Upstream, options: SessionOptions) {
    this.#upstream = upstream;
    this.#options = options;
    this.#log = options.log;
  }

  servedFiles(): ServedFile[] {
    return [...this.#served.values()];
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://index.invalid');
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'method-not-allowed', 'GET or HEAD only');
    const path = url.pathname;
    if (path === '/' || path === '/simple') return redirect(res, `/simple/${url.search}`);
    if (path === '/simple/') return this.#projectList(req, res, url);
    const page = /^\/simple\/([^/]+)(\/?)$/.exec(path);
    if (page) {
      const name = safeDecode(page[1]!);
      const project = normalizeProjectName(name);
      if (name !== project || page[2] !== '/') return redirect(res, `/simple/${encodeURIComponent(project)}/${url.search}`);
      return this.#projectPage(req, res, url, project);
    }
    const file = /^\/files\/([^/]+)\/([^/]+)$/.exec(path);
    if (file) return this.#download(req, res, normalizeProjectName(safeDecode(file[1]!)), safeDecode(file[2]!));
    return plain(res, 404, 'not-found', `no such path: ${path}`);
  }

  /** The filtered page of a project: fetched once per build (a failure is asked again next time). */
  #page(project: string): Promise<FilteredPage> {
    let pending = this.#pages.get(project);
    if (!pending) {
      pending = this.#fetchPage(project);
      this.#pages.set(project, pending);
      pending.catch(() => this.#pages.delete(project));
    }
    return pending;
  }

  async #fetchPage(project: string): Promise<FilteredPage> {
    const answer = await this.#upstream.projectPage(project);
    if (answer.cache === 'stale') {
      this.#problem({
        reason: answer.staleBecause ?? 'upstream-unreachable',
        project,
        filename: null,
        message: `${this.#upstream.description}: ${answer.staleBecause}; served the page stored in the cache`,
        refused: false,
      });
    }
    const rule = { cutoff: this.#options.cutoff, missingUploadTime: this.#options.missingUploadTime ?? 'exclude' };
    const filtered = filterPage(answer.page, rule);
    if (filtered.missingUploadTime > 0 || filtered.keptWithoutUploadTime > 0) {
      const all = answer.page.files.every((f) => f.uploadTime === null);
      const count = filtered.missingUploadTime + filtered.keptWithoutUploadTime;
      this.#problem({
        reason: 'upload-time-missing',
        project,
        filename: null,
        message:
          `${count} of ${answer.page.files.length} files of ${project} have no upload time` +
          (all && answer.page.format === 'html' ? ' (the upstream answered HTML, which carries none)' : '') +
          (filtered.missingUploadTime > 0
            ? '; left out (index.missingUploadTime: exclude)'
            : '; served anyway (index.missingUploadTime: include)'),
        refused: false,
      });
    }
    this.#log.debug(
      {
        project,
        files: answer.page.files.length,
        kept: filtered.page.files.length,
        afterCutoff: filtered.afterCutoff,
        cache: answer.cache,
      },
      'index time machine: project page',
    );
    return filtered;
  }

  /** Hands a served file's bytes to `keep`; a failure there is a problem of the build, not of the download. */
  #keep(file: ServedFile, bytes: Buffer): void {
    try {
      this.#options.keep?.(file, bytes);
    } catch (error) {
      this.#problem({
        reason: 'keep-failed',
        project: file.project,
        filename: file.filename,
        message: `${file.filename}: its bytes could not be kept: ${(error as Error).message}`,
        refused: false,
      });
    }
  }

  #problem(problem: IndexProblem): void {
    this.problemList.push(problem);
    this.#log.warn({ ...problem }, `index time machine: ${problem.reason}`);
  }

  /** Answers a failure of the upstream: 404 for no such project, 502 (reason in the status line) otherwise. */
  #fail(res: ServerResponse, error: unknown, project: string, filename: string | null): void {
    const reason = indexFailureReason(error);
    if (reason === null) throw error;
    const message = (error as Error).message;
    this.#problem({ reason, project, filename, message, refused: true });
    plain(res, reason === 'upstream-status-404' || reason === 'file-not-listed' ? 404 : 502, reason, message);
  }

  async #projectList(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const format = chooseFormat(req.headers.accept, url.searchParams.get('format'));
    if (format === null) return notAcceptable(res);
    // A remote index's list is not filtered by date (that would take every project's page): the
    // list is the projects of this build; a directory's, its projects with a file before the cutoff.
    const names = (await this.#upstream.projectNames()) ?? [...this.#pages.keys()];
    const listed: string[] = [];
    for (const name of names) {
      const page = await this.#page(name).catch(() => null);
      if (page && page.page.files.length > 0) listed.push(name);
    }
    send(req, res, renderProjectList(listed, format, '/simple/'));
  }

  async #projectPage(req: IncomingMessage, res: ServerResponse, url: URL, project: string): Promise<void> {
    const format: PageFormat | null = chooseFormat(req.headers.accept, url.searchParams.get('format'));
    if (format === null) return notAcceptable(res);
    let filtered: FilteredPage;
    try {
      filtered = await this.#page(project);
    } catch (error) {
      return this.#fail(res, error, project, null);
    }
    send(
      req,
      res,
      renderProjectPage(filtered.page, format, (f) => fileUrl(project, f)),
    );
  }

  async #download(req: IncomingMessage, res: ServerResponse, project: string, filename: string): Promise<void> {
    let filtered: FilteredPage;
    try {
      filtered = await this.#page(project);
    } catch (error) {
      return this.#fail(res, error, project, filename);
    }
    const file = filtered.page.files.find((f) => f.filename === filename);
    if (!file) {
      const reason = this.#options.cutoff
        ? `the page of ${project} served for the cutoff ${this.#options.cutoff.toISOString()}`
        : `the page of ${project}`;
      return this.#fail(res, indexFailure('file-not-listed', `${filename} is not on ${reason}`, { status: 404 }), project, filename);
    }
    if (req.method === 'HEAD') {
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        ...(file.size === null ? {} : { 'content-length': String(file.size) }),
      });
      return void res.end();
    }
    let body: FileBody;
    try {
      body = await this.#upstream.openFile(file);
    } catch (error) {
      return this.#fail(res, error, project, filename);
    }
    await this.#stream(res, project, file, body);
  }

  /**
   * Passes the file on one chunk behind what has arrived, hashing as it goes: the last chunk is
   * sent only once the whole file has the listed hash. A mismatch before anything was sent is a
   * 502 `hash-mismatch`; after, the connection is cut (the client's download is incomplete).
   */
  async #stream(res: ServerResponse, project: string, file: IndexFile, body: FileBody): Promise<void> {
    const expected = preferredHash(file.hashes);
    const sha256 = createHash('sha256');
    const check: Hash | null = expected && expected.name !== 'sha256' ? createHash(expected.name) : null;
    let clientGone = false;
    res.on('close', () => {
      if (!res.writableFinished) {
        clientGone = true;
        body.abort();
      }
    });
    res.setHeader('content-type', 'application/octet-stream');
    if (body.size !== null) res.setHeader('content-length', String(body.size));
    let held: Buffer | null = null;
    const kept: Buffer[] | null = this.#options.keep && !this.#served.has(file.filename) ? [] : null;
    try {
      for await (const chunk of body.chunks) {
        const buffer = Buffer.from(chunk);
        sha256.update(buffer);
        check?.update(buffer);
        kept?.push(buffer);
        if (held && !(await write(res, held))) return;
        held = buffer;
      }
    } catch (error) {
      if (clientGone) return;
      const reason = indexFailureReason(error) ?? 'upstream-unreachable';
      this.#problem({ reason, project, filename: file.filename, message: (error as Error).message, refused: true });
      if (!res.headersSent) plain(res, 502, reason, (error as Error).message);
      else res.destroy();
      return;
    }
    if (clientGone) return;
    const digest = sha256.digest('hex');
    const actual = check ? check.digest('hex') : digest;
    if (expected && actual !== expected.hex) {
      const message = `${file.filename}: ${expected.name} ${actual} does not match the index's ${expected.hex} (${file.url})`;
      this.#problem({ reason: 'hash-mismatch', project, filename: file.filename, message, refused: true });
      if (!res.headersSent) plain(res, 502, 'hash-mismatch', message);
      else res.destroy();
      return;
    }
    if (!expected) {
      this.#problem({
        reason: 'hash-missing',
        project,
        filename: file.filename,
        message: `${file.filename}: the index lists no hash; served unchecked (sha256 ${digest})`,
        refused: false,
      });
    }
    res.end(held ?? undefined);
    if (!this.#served.has(file.filename)) {
      const served: ServedFile = {
        project,
        version: parseDistributionFilename(file.filename, project)?.version ?? null,
        filename: file.filename,
        sha256: digest,
        url: file.url,
        uploadTime: file.uploadTime,
      };
      this.#served.set(file.filename, served);
      if (kept) this.#keep(served, Buffer.concat(kept));
    }
    this.#log.debug({ project, filename: file.filename, sha256: digest }, 'index time machine: file served');
  }
}

/** Where the time machine serves a file: a path on itself (the container can reach nothing else). */
export function fileUrl(project: string, file: IndexFile): string {
  return `/files/${encodeURIComponent(project)}/${encodeURIComponent(file.filename)}`;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Writes a chunk, waiting while the client is slow; false when the client went away. */
function write(res: ServerResponse, chunk: Buffer): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  if (res.write(chunk)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const drained = () => {
      res.off('close', closed);
      resolve(true);
    };
    const closed = () => {
      res.off('drain', drained);
      resolve(false);
    };
    res.once('drain', drained);
    res.once('close', closed);
  });
}

function send(req: IncomingMessage, res: ServerResponse, page: { contentType: string; body: string }): void {
  const body = Buffer.from(page.body, 'utf8');
  res.writeHead(200, {
    'content-type': page.contentType,
    'content-length': String(body.length),
    vary: 'Accept',
    // Every build has its own cutoff behind the same URL: nothing may keep a page.
    'cache-control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function plain(res: ServerResponse, status: number, reason: string, message: string): void {
  res.removeHeader('content-length');
  res.writeHead(status, reason.replace(/[^\x20-\x7e]/g, '?'), { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`${reason}: ${message}\n`);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(301, { location, 'cache-control': 'no-store' });
  res.end();
}

function notAcceptable(res: ServerResponse): void {
  plain(
    res,
    406,
    'not-acceptable',
    'this index serves application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html and text/html',
  );
}
