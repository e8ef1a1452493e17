import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DistDirectory, type LocalDistribution } from './dist-directory.js';
import { normalizeProjectName } from './distribution-filename.js';
import { chooseFormat, type PageFormat } from './negotiate.js';
import { renderProjectList, renderProjectPage } from './render-page.js';

export interface LocalIndexOptions {
  /** A directory of wheels and sdists, with upload times in its `index.json` (`DistDirectory`). */
  readonly dir: string;
  /**
   * `both` (default): PEP 691 JSON and PEP 503 HTML by content negotiation, JSON with PEP 700's
   * sizes and upload times. `html`: HTML whatever is asked (a legacy index, no upload times).
   */
  readonly formats?: 'both' | 'html';
}

/** One request the local index answered (tests read them). */
export interface LocalIndexRequest {
  readonly method: string;
  readonly path: string;
  readonly accept: string | null;
  readonly conditional: boolean;
  readonly status: number;
}

export interface LocalIndex {
  /** `http://127.0.0.1:<port>/simple/`. */
  readonly url: string;
  readonly requests: () => readonly LocalIndexRequest[];
  close(): Promise<void>;
}

/**
 * A simple index of a local directory on 127.0.0.1 (a free port): `/simple/`, `/simple/<project>/`
 * and the files under `/files/<filename>`. Pages carry an ETag and a matching `If-None-Match` is
 * answered 304, as PyPI does. The directory is read at each request, so files added meanwhile
 * appear. For tests and the demo: the upstream of a time machine where no public index is
 * reachable.
 */
export async function startLocalIndex(options: LocalIndexOptions): Promise<LocalIndex> {
  const dir = new DistDirectory(options.dir);
  const log: LocalIndexRequest[] = [];
  const server = createServer((req, res) => {
    let status: number;
    try {
      status = answer(req, res, dir, options.formats ?? 'both');
    } catch (error) {
      status = res.headersSent ? 200 : plain(res, 500, (error as Error).message);
    }
    log.push({
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      accept: req.headers.accept ?? null,
      conditional: req.headers['if-none-match'] !== undefined,
      status,
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/simple/`,
    requests: () => [...log],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function answer(req: IncomingMessage, res: ServerResponse, dir: DistDirectory, formats: 'both' | 'html'): number {
  const url = new URL(req.url ?? '/', 'http://local.invalid');
  const path = url.pathname;
  const format: PageFormat | null = formats === 'html' ? 'text-html' : chooseFormat(req.headers.accept, url.searchParams.get('format'));
  if (path === '/simple/') {
    if (!format) return plain(res, 406, 'not acceptable');
    return page(req, res, renderProjectList([...dir.read().keys()], format, '/simple/'));
  }
  const project = /^\/simple\/([^/]+)\/$/.exec(path);
  if (project) {
    if (!format) return plain(res, 406, 'not acceptable');
    const name = normalizeProjectName(decodeURIComponent(project[1]!));
    const files = dir.read().get(name);
    if (!files) return plain(res, 404, `no project ${name}`);
    const stripped = formats === 'html' ? files.map((f) => ({ ...f, uploadTime: null, size: null })) : files;
    return page(
      req,
      res,
      renderProjectPage({ name, files: stripped, format: 'json' }, format, (f) => `/files/${encodeURIComponent(f.filename)}`),
    );
  }
  const file = /^\/files\/([^/]+)$/.exec(path);
  if (file) {
    const filename = decodeURIComponent(file[1]!);
    let found: LocalDistribution | undefined;
    for (const list of dir.read().values()) found ??= list.find((f) => f.filename === filename);
    if (!found) return plain(res, 404, `no file ${filename}`);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(found.size) });
    if (req.method === 'HEAD') res.end();
    else createReadStream(found.path).pipe(res);
    return 200;
  }
  return plain(res, 404, `no such path: ${path}`);
}

function page(req: IncomingMessage, res: ServerResponse, rendered: { contentType: string; body: string }): number {
  const etag = `"${createHash('sha256').update(rendered.contentType).update(rendered.body).digest('hex').slice(0, 32)}"`;
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, { etag, vary: 'Accept' });
    res.end();
    return 304;
  }
  const body = Buffer.from(rendered.body, 'utf8');
  res.writeHead(200, { 'content-type': rendered.contentType, 'content-length': String(body.length), etag, vary: 'Accept' });
  res.end(req.method === 'HEAD' ? undefined : body);
  return 200;
}

function plain(res: ServerResponse, status: number, message: string): number {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${message}\n`);
  return status;
}
