import { execFileSync } from 'node:child_process';
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize, sep } from 'node:path';
import type { DockerService } from '../../pipeline/services/docker.js';

/**
 * A git repository served over git's "dumb" HTTP protocol (static files of a bare clone), on the
 * Docker bridge's gateway address: what a `docker build` step can clone from, as it would clone
 * from GitHub. Tests pass the URL as the task Dockerfile's REPO_URL build argument.
 */
export interface GitHttpServer {
  /** `http://<gateway>:<port>/<name>.git`, reachable from containers on the default bridge. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The default bridge network's gateway (the host as containers see it), asked of a container on
 * that network: its default route (the engine's IPAM does not always name the gateway, and Node
 * does not list a bridge interface without carrier).
 */
export async function bridgeGateway(docker: DockerService, image: string): Promise<string> {
  const r = await docker.run({
    image,
    cmd: ['cat', '/proc/net/route'],
    network: 'bridge',
    timeoutMs: 60_000,
    limits: { cpus: 0.5, memoryMb: 128, pidsLimit: 32 },
  });
  const hex = r.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find((f) => f[1] === '00000000' && f[2] !== '00000000')?.[2];
  if (!hex) throw new Error(`no default route in a container on the bridge network: ${r.stdout}${r.stderr}`);
  // /proc/net/route holds the address little-endian in hex.
  return [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16)).join('.');
}

export async function serveGitOverHttp(
  docker: DockerService,
  image: string,
  repoPath: string,
  scratch: string,
  name = 'repo',
): Promise<GitHttpServer> {
  const bare = join(scratch, `${name}.git`);
  execFileSync('git', ['clone', '-q', '--bare', repoPath, bare]);
  execFileSync('git', ['-C', bare, 'update-server-info']);
  const root = normalize(scratch);
  const server: Server = createServer((req, res) => {
    const path = normalize(join(root, decodeURIComponent((req.url ?? '/').split('?')[0]!)));
    if (req.method !== 'GET' || !path.startsWith(`${bare}${sep}`)) {
      res.writeHead(404).end();
      return;
    }
    try {
      if (!statSync(path).isFile()) throw new Error('not a file');
    } catch {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    createReadStream(path).pipe(res);
  });
  const host = await bridgeGateway(docker, image);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/${name}.git`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
