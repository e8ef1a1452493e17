import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A loopback HTTP server that answers as a test scripts it: the faults a package index can show
 * (never answering, 404, 500, truncated pages, pages that lie about a hash). Every request is
 * counted by path. `close` ends every open connection too (a hanging answer included).
 */
export interface FaultServer {
  /** `http://127.0.0.1:<port>/simple/`. */
  readonly url: string;
  readonly origin: string;
  /** Requests seen per path. */
  count(path: string): number;
  close(): Promise<void>;
}

export async function startFaultServer(handler: (req: IncomingMessage, res: ServerResponse, origin: string) => void): Promise<FaultServer> {
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  let origin = '';
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    handler(req, res, origin);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/simple/`,
    origin,
    count: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
