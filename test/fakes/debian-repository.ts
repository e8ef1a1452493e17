import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';

/**
 * A flat Debian repository on loopback, standing in for Debian's mirror: tiny `.deb` packages made
 * with `dpkg-deb --build`, indexed with `dpkg-scanpackages --multiversion` (dpkg-dev, installed by
 * scripts/setup-test-env.sh), served over HTTP on 127.0.0.1 as apt reads them with
 * `deb [trusted=yes] http://127.0.0.1:PORT/ ./`. The test adds and removes package versions
 * while it runs, as a mirror moves on.
 */
export interface DebianRepository {
  /** `http://127.0.0.1:PORT/`. */
  readonly url: string;
  /** The sources.list line that names only this repository. */
  readonly sourcesLine: string;
  /** Builds `name_version_all.deb` (its one file `/usr/share/NAME/version` holds `NAME VERSION`) and indexes it. */
  add(name: string, version: string, depends?: string): void;
  /** Removes a version and indexes again. */
  remove(name: string, version: string): void;
  close(): Promise<void>;
}

export async function startDebianRepository(dir: string): Promise<DebianRepository> {
  const pool = join(dir, 'repo');
  mkdirSync(pool, { recursive: true });
  const debOf = (name: string, version: string) => join(pool, `${name}_${version}_all.deb`);
  const index = () => {
    const packages = execFileSync('dpkg-scanpackages', ['--multiversion', '.', '/dev/null'], {
      cwd: pool,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    writeFileSync(join(pool, 'Packages'), packages);
  };
  index();
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^\/+/, '');
    if (path.startsWith('..') || path === '' || path.includes('/')) {
      res.writeHead(404).end();
      return;
    }
    let body: Buffer;
    try {
      body = readFileSync(join(pool, path));
    } catch {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    sourcesLine: `deb [trusted=yes] ${url} ./`,
    add(name, version, depends) {
      const root = join(dir, 'build', `${name}_${version}`);
      rmSync(root, { recursive: true, force: true });
      mkdirSync(join(root, 'DEBIAN'), { recursive: true });
      mkdirSync(join(root, 'usr', 'share', name), { recursive: true });
      writeFileSync(join(root, 'usr', 'share', name, 'version'), `${name} ${version}\n`);
      const control = [
        `Package: ${name}`,
        `Version: ${version}`,
        'Architecture: all',
        'Maintainer: perfmine tests <tests@perfmine.invalid>',
        ...(depends ? [`Depends: ${depends}`] : []),
        `Description: ${name}, a package of perfmine's tests`,
        '',
      ].join('\n');
      writeFileSync(join(root, 'DEBIAN', 'control'), control);
      execFileSync('dpkg-deb', ['--root-owner-group', '--build', root, debOf(name, version)], { stdio: ['ignore', 'pipe', 'pipe'] });
      index();
    },
    remove(name, version) {
      rmSync(debOf(name, version));
      index();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
