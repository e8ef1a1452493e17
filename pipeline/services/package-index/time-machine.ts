import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { saveBlob } from '../../../cache/blobs.js';
import { IndexCache } from '../../../cache/index-cache.js';
import type { Db } from '../../../cache/store.js';
import type { Logger } from '../../logging.js';
import { DirUpstream } from './dir-upstream.js';
import { FORWARDER_FILE, FORWARDER_SCRIPT, SOCKET_FILE } from './forwarder.js';
import { HttpUpstream, type FetchLike } from './http-upstream.js';
import { Session, type IndexProblem, type ServedFile } from './index-session.js';
import type { Upstream } from './upstream.js';

export type { IndexProblem, ServedFile } from './index-session.js';
export { fileUrl } from './index-session.js';

export interface TimeMachineOptions {
  /** The upstream: an HTTP(S) simple index URL (`https://pypi.org/simple/`) or `dir:PATH`. */
  readonly upstream: string;
  /** Files uploaded at or after this instant are not served; null: no cutoff (`resolveCutoff`). */
  readonly cutoff: Date | null;
  /** Files without an upload time, when a cutoff applies (default `exclude`). */
  readonly missingUploadTime?: 'exclude' | 'include';
  /** The store: project pages are cached in it with conditional requests. Null: no cache. */
  readonly store: Db | null;
  /**
   * Also keep the bytes of every file served, in the store's blobs by SHA-256 (needs `store`):
   * what a task folder carries later when its index cannot be reached again (emit.vendorWheels).
   */
  readonly keepFiles?: boolean;
  readonly log: Logger;
  /** Per upstream request (a page whole; a file's headers, then each gap between chunks). */
  readonly timeoutMs: number;
  /** Further attempts after a failure that may pass. */
  readonly retries: number;
  /** Wait before the first retry, doubled each time (default 500 ms). */
  readonly retryDelayMs?: number;
  /** Also listen on 127.0.0.1 at a free port (for the host: `url`). */
  readonly tcp?: boolean;
  /** Where the socket's fresh directory is made (default the OS temp directory). */
  readonly tmpDir?: string;
  /** The HTTP client (default global fetch). */
  readonly fetch?: FetchLike;
}
export interface TimeMachine {
  /** A fresh directory holding the socket and the forwarder: bind-mount it into the container. */
  readonly socketDir: string;
  readonly socketPath: string;
  /** `http://127.0.0.1:<port>/simple/` when `tcp`; else null. */
  readonly url: string | null;
  readonly cutoff: Date | null;
  readonly upstream: string;
  /** Every file served to this build, in the order they completed (each file once). */
  served(): ServedFile[];
  problems(): IndexProblem[];
  /** Stops listening, ends open connections and removes the socket's directory. */
  close(): Promise<void>;
}

/** The upstream named by a configuration string. */
export function upstreamOf(
  spec: string,
  options: Pick<TimeMachineOptions, 'store' | 'timeoutMs' | 'retries' | 'retryDelayMs' | 'fetch'>,
): Upstream {
  if (spec.startsWith('dir:')) return new DirUpstream(spec.slice('dir:'.length));
  return new HttpUpstream({
    url: spec,
    timeoutMs: options.timeoutMs,
    retries: options.retries,
    cache: options.store ? new IndexCache(options.store) : null,
    ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/**
 * Starts the index time machine of one build: a simple index (PEP 503 HTML and PEP 691 JSON,
 * negotiated as PyPI does) in front of `upstream`, listing only the files uploaded before
 * `cutoff`, on a unix socket in a fresh directory (and on 127.0.0.1 with `tcp`). Files are streamed
 * from the upstream through `/files/<project>/<filename>`, their hash checked as they pass: a
 * mismatch aborts the transfer (the client sees a broken download) and is recorded as
 * `hash-mismatch`. Only files the filtered page lists are served. With `keepFiles`, the bytes of each
 * file served whole are stored by their SHA-256 (the lock's) in the store's blobs.
 */
export async function startTimeMachine(options: TimeMachineOptions): Promise<TimeMachine> {
  const upstream = upstreamOf(options.upstream, options);
  const socketDir = mkdtempSync(join(options.tmpDir ?? tmpdir(), 'perfmine-index-'));
  const socketPath = join(socketDir, SOCKET_FILE);
  copyFileSync(FORWARDER_SCRIPT, join(socketDir, FORWARDER_FILE));
  // The container's user may not be this one: the directory readable, the socket writable.
  chmodSync(socketDir, 0o755);
  chmodSync(join(socketDir, FORWARDER_FILE), 0o644);
  const store = options.keepFiles ? options.store : null;
  const session = new Session(upstream, { ...options, keep: store ? (_file, bytes) => void saveBlob(store, bytes) : null });
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    session.handle(req, res).catch((error: unknown) => {
      options.log.error({ err: error, path: req.url }, 'index time machine: request failed');
      session.problemList.push({
        reason: 'internal',
        project: null,
        filename: null,
        message: `${req.url ?? ''}: ${(error as Error).message}`,
        refused: true,
      });
      if (!res.headersSent) {
        res.writeHead(500, 'internal', { 'content-type': 'text/plain; charset=utf-8' });
        res.end('internal error\n');
      } else res.destroy();
    });
  };
  const servers: Server[] = [];
  try {
    const unix = createServer(handler);
    servers.push(unix);
    await listen(unix, socketPath);
    chmodSync(socketPath, 0o666);
    let url: string | null = null;
    if (options.tcp) {
      const tcp = createServer(handler);
      servers.push(tcp);
      await listen(tcp, { host: '127.0.0.1', port: 0 });
      url = `http://127.0.0.1:${(tcp.address() as AddressInfo).port}/simple/`;
    }
    options.log.debug(
      { socketPath, url, upstream: upstream.description, cutoff: options.cutoff?.toISOString() ?? null },
      'index time machine started',
    );
    let closed: Promise<void> | null = null;
    return {
      socketDir,
      socketPath,
      url,
      cutoff: options.cutoff,
      upstream: upstream.description,
      served: () => session.servedFiles(),
      problems: () => [...session.problemList],
      close: () => (closed ??= closeAll(servers).finally(() => rmSync(socketDir, { recursive: true, force: true }))),
    };
  } catch (error) {
    await closeAll(servers);
    rmSync(socketDir, { recursive: true, force: true });
    throw error;
  }
}

function listen(server: Server, where: string | { host: string; port: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const done = () => {
      server.off('error', reject);
      resolve();
    };
    if (typeof where === 'string') server.listen(where, done);
    else server.listen(where.port, where.host, done);
  });
}

async function closeAll(servers: readonly Server[]): Promise<void> {
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          if (!server.listening) return resolve();
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    ),
  );
}
