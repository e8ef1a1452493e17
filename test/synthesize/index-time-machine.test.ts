import { createHash } from 'node:crypto';
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../cache/store.js';
import { startBuildIndex } from '../../pipeline/services/package-index/build-index.js';
import { startLocalIndex, type LocalIndex } from '../../pipeline/services/package-index/local-index.js';
import { startTimeMachine, type TimeMachine, type TimeMachineOptions } from '../../pipeline/services/package-index/time-machine.js';
import { buildWheel } from '../../pipeline/services/package-index/wheel.js';
import { writeDepWheels } from '../fakes/dep-wheels.js';
import { closedPort, startFaultServer, type FaultServer } from '../fakes/index-faults.js';
import { memoryLogger, tempDir } from '../helpers/index.js';

const PIP_ACCEPT = 'application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01';

interface Answer {
  readonly status: number;
  readonly reason: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  /** False when the connection ended before the whole body (an aborted transfer). */
  readonly complete: boolean;
}

/** A GET over the time machine's unix socket, as the forwarder passes it on. */
function get(tm: TimeMachine, path: string, accept = PIP_ACCEPT): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: tm.socketPath, path, headers: { accept }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      const done = () =>
        resolve({
          status: res.statusCode ?? 0,
          reason: res.statusMessage ?? '',
          headers: res.headers,
          body: Buffer.concat(chunks),
          complete: res.complete,
        });
      res.on('error', () => undefined);
      res.on('close', done);
    });
    req.on('error', reject);
    req.end();
  });
}

function json(answer: Answer): {
  files: { filename: string; url: string; yanked?: unknown; 'upload-time'?: string; hashes: Record<string, string> }[];
} {
  expect(answer.headers['content-type']).toBe('application/vnd.pypi.simple.v1+json');
  return JSON.parse(answer.body.toString('utf8')) as ReturnType<typeof json>;
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const rows = (db: Db) => db.prepare('SELECT url, etag FROM index_pages ORDER BY url').all() as { url: string; etag: string | null }[];

describe('the index time machine in front of a loopback index of generated wheels', () => {
  const dir = tempDir('index-wheels-');
  let names: Map<string, string>;
  let index: LocalIndex;
  const db = openStore(':memory:');
  const open: TimeMachine[] = [];

  const start = async (options: Partial<TimeMachineOptions> & Pick<TimeMachineOptions, 'cutoff'>) => {
    const tm = await startTimeMachine({
      upstream: index.url,
      store: db,
      log: memoryLogger().log,
      timeoutMs: 5_000,
      retries: 0,
      ...options,
    });
    open.push(tm);
    return tm;
  };

  beforeAll(async () => {
    names = writeDepWheels(dir);
    index = await startLocalIndex({ dir });
  });
  afterAll(async () => {
    for (const tm of open) await tm.close();
    await index.close();
    db.close();
  });

  it('lists only what was uploaded before the cutoff, yanked files with their mark, in JSON and HTML', async () => {
    const listed = async (cutoff: string | null) => {
      const tm = await start({ cutoff: cutoff === null ? null : new Date(cutoff) });
      const page = json(await get(tm, '/simple/dep/'));
      return page.files.map((f) => [f.filename, f.yanked ?? false]);
    };
    expect(await listed('2023-06-01T00:00:00Z')).toEqual([[names.get('1.0'), false]]);
    expect(await listed('2024-09-01T00:00:00Z')).toEqual([
      [names.get('1.0'), false],
      [names.get('2.0'), false],
      [names.get('2.0.1'), 'broke the API of 2.0'],
    ]);
    expect(await listed(null)).toHaveLength(4);

    const tm = await start({ cutoff: new Date('2024-09-01T00:00:00Z') });
    const html = await get(tm, '/simple/dep/', 'text/html');
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    const text = html.body.toString('utf8');
    expect(text).toContain(`href="/files/dep/${names.get('1.0')}#sha256=${sha256(readFileSync(join(dir, names.get('1.0')!)))}"`);
    expect(text).toContain('data-yanked="broke the API of 2.0"');
    expect(text).toContain('data-requires-python="&gt;=3.8"');
    expect(text).not.toContain('3.0');
    expect((await get(tm, '/simple/dep/?format=application/vnd.pypi.simple.v1%2Bhtml', PIP_ACCEPT)).headers['content-type']).toBe(
      'application/vnd.pypi.simple.v1+html; charset=utf-8',
    );
    expect((await get(tm, '/simple/dep/', 'application/json')).status).toBe(406);
  });

  it('redirects names that are not normalized, and lists the projects of the build', async () => {
    const tm = await start({ cutoff: null });
    const moved = await get(tm, '/simple/DEP');
    expect(moved.status).toBe(301);
    expect(moved.headers.location).toBe('/simple/dep/');
    expect((await get(tm, '/simple/')).body.toString()).toBe('{"meta":{"api-version":"1.0"},"projects":[]}\n');
    await get(tm, '/simple/dep/');
    expect(JSON.parse((await get(tm, '/simple/')).body.toString())).toMatchObject({ projects: [{ name: 'dep' }] });
  });

  it('serves the files it lists, checked, records them, and refuses the ones it does not list', async () => {
    const tm = await start({ cutoff: new Date('2023-06-01T00:00:00Z') });
    const page = json(await get(tm, '/simple/dep/'));
    const wheel = readFileSync(join(dir, names.get('1.0')!));
    const download = await get(tm, page.files[0]!.url);
    expect(download).toMatchObject({ status: 200, complete: true });
    expect(download.body.equals(wheel)).toBe(true);
    expect(tm.served()).toEqual([
      {
        project: 'dep',
        version: '1.0',
        filename: names.get('1.0'),
        sha256: sha256(wheel),
        url: `${index.url.replace('/simple/', '')}/files/${names.get('1.0')}`,
        uploadTime: '2023-01-15T09:30:00Z',
      },
    ]);
    const later = await get(tm, `/files/dep/${names.get('3.0')}`);
    expect(later).toMatchObject({ status: 404, reason: 'file-not-listed' });
    expect(tm.problems()).toEqual([expect.objectContaining({ reason: 'file-not-listed', filename: names.get('3.0'), refused: true })]);
    expect(tm.served()).toHaveLength(1);
  });

  it('caches pages in the store and asks again conditionally; stores nothing when the upstream is gone', async () => {
    await get(await start({ cutoff: null }), '/simple/dep/');
    const before = index.requests().length;
    const tm = await start({ cutoff: null });
    expect(json(await get(tm, '/simple/dep/')).files).toHaveLength(4);
    const asked = index.requests().slice(before);
    expect(asked).toEqual([expect.objectContaining({ path: '/simple/dep/', conditional: true, status: 304 })]);
    expect(rows(db)).toEqual([{ url: `${index.url}dep/`, etag: expect.stringMatching(/^"[0-9a-f]{32}"$/) }]);

    const gone = await startLocalIndex({ dir });
    const url = gone.url;
    await gone.close();
    const other = openStore(':memory:');
    try {
      const tm2 = await startTimeMachine({
        upstream: url,
        store: other,
        log: memoryLogger().log,
        timeoutMs: 2_000,
        retries: 0,
        cutoff: null,
      });
      open.push(tm2);
      expect((await get(tm2, '/simple/dep/')).reason).toBe('upstream-unreachable');
      expect(rows(other)).toEqual([]);
    } finally {
      other.close();
    }
  });

  it('serves the page stored in the cache, marked, when the upstream stops answering', async () => {
    const local = await startLocalIndex({ dir });
    const store = openStore(':memory:');
    try {
      const first = await startTimeMachine({
        upstream: local.url,
        store,
        log: memoryLogger().log,
        timeoutMs: 2_000,
        retries: 0,
        cutoff: null,
      });
      open.push(first);
      expect(json(await get(first, '/simple/dep/')).files).toHaveLength(4);
      await local.close();
      const second = await startTimeMachine({
        upstream: local.url,
        store,
        log: memoryLogger().log,
        timeoutMs: 2_000,
        retries: 0,
        cutoff: null,
      });
      open.push(second);
      expect(json(await get(second, '/simple/dep/')).files).toHaveLength(4);
      expect(second.problems()).toEqual([expect.objectContaining({ reason: 'upstream-unreachable', refused: false })]);
    } finally {
      store.close();
    }
  });

  it('reads a directory directly (dir:), upload times from its manifest, else from the files', async () => {
    const local = tempDir('index-dir-');
    writeDepWheels(local);
    const extra = buildWheel({ name: 'other', version: '0.1', files: { 'other/__init__.py': '' } });
    writeFileSync(join(local, extra.filename), extra.bytes);
    const when = new Date('2022-03-04T05:06:07Z');
    utimesSync(join(local, extra.filename), when, when);
    const tm = await startTimeMachine({
      upstream: `dir:${local}`,
      store: null,
      log: memoryLogger().log,
      timeoutMs: 1_000,
      retries: 0,
      cutoff: new Date('2023-06-01T00:00:00Z'),
      tcp: true,
    });
    open.push(tm);
    expect(json(await get(tm, '/simple/dep/')).files.map((f) => [f.filename, f['upload-time']])).toEqual([
      [names.get('1.0'), '2023-01-15T09:30:00Z'],
    ]);
    const other = json(await get(tm, '/simple/other/')).files;
    expect(other.map((f) => f['upload-time'])).toEqual(['2022-03-04T05:06:07.000Z']);
    expect(JSON.parse((await get(tm, '/simple/')).body.toString())).toMatchObject({ projects: [{ name: 'dep' }, { name: 'other' }] });
    const viaTcp = await fetch(new URL(other[0]!.url, tm.url!));
    expect(Buffer.from(await viaTcp.arrayBuffer()).equals(extra.bytes)).toBe(true);
    expect(tm.served().map((s) => s.filename)).toEqual([extra.filename]);
    expect((await get(tm, '/simple/nothing/')).reason).toBe('upstream-status-404');
  });
});

describe('the index of a build, from the configuration', () => {
  it('starts a time machine at the commit date plus the slack, with what the container needs', async () => {
    const dir = tempDir('index-build-');
    const names = writeDepWheels(dir);
    const { timeMachine, access } = await startBuildIndex(
      { upstream: `dir:${dir}`, cutoff: 'commit-date', slackDays: 3, missingUploadTime: 'exclude', timeoutSeconds: 5, retries: 0 },
      { commitDate: '2024-06-27T10:00:00+02:00', store: null, log: memoryLogger().log },
    );
    try {
      expect(timeMachine.cutoff?.toISOString()).toBe('2024-06-30T08:00:00.000Z');
      expect(access.env.UV_EXCLUDE_NEWER).toBe('2024-06-30T08:00:00.000Z');
      expect(access.mounts).toEqual([{ source: timeMachine.socketDir, target: '/mnt', readOnly: true }]);
      expect(json(await get(timeMachine, '/simple/dep/')).files.map((f) => f.filename)).toEqual([names.get('1.0'), names.get('2.0')]);
    } finally {
      await timeMachine.close();
    }
  });
});

describe('the index time machine when the upstream misbehaves', () => {
  const db = openStore(':memory:');
  const servers: FaultServer[] = [];
  const machines: TimeMachine[] = [];

  afterAll(async () => {
    for (const tm of machines) await tm.close();
    for (const s of servers) await s.close();
    db.close();
  });

  const machine = async (upstream: string, options: Partial<TimeMachineOptions> = {}) => {
    const tm = await startTimeMachine({
      upstream,
      store: db,
      log: memoryLogger().log,
      timeoutMs: 300,
      retries: 1,
      retryDelayMs: 0,
      cutoff: new Date('2024-09-01T00:00:00Z'),
      ...options,
    });
    machines.push(tm);
    return tm;
  };
  const fault = async (handler: Parameters<typeof startFaultServer>[0]) => {
    const s = await startFaultServer(handler);
    servers.push(s);
    return s;
  };
  const storedFor = (url: string) => rows(db).filter((r) => r.url.startsWith(url));

  it('names an upstream that refuses connections', async () => {
    const tm = await machine(`http://127.0.0.1:${await closedPort()}/simple/`);
    const answer = await get(tm, '/simple/dep/');
    expect(answer).toMatchObject({ status: 502, reason: 'upstream-unreachable' });
    expect(answer.body.toString()).toMatch(/ECONNREFUSED/);
    expect(tm.problems()).toEqual([expect.objectContaining({ reason: 'upstream-unreachable', project: 'dep', refused: true })]);
  });

  it('names an upstream that does not answer within the time limit, after its retries, without hanging', async () => {
    const slow = await fault(() => undefined);
    const tm = await machine(slow.url);
    expect(await get(tm, '/simple/dep/')).toMatchObject({ status: 502, reason: 'upstream-timeout' });
    expect(slow.count('/simple/dep/')).toBe(2);
    expect(storedFor(slow.url)).toEqual([]);
  });

  it('answers 404 for a project the upstream does not have, 502 for its 500s (retried)', async () => {
    const errors = await fault((req, res) => {
      res.writeHead(req.url === '/simple/missing/' ? 404 : 500, { etag: '"x"' });
      res.end('no');
    });
    const tm = await machine(errors.url);
    expect(await get(tm, '/simple/missing/')).toMatchObject({ status: 404, reason: 'upstream-status-404' });
    expect(errors.count('/simple/missing/')).toBe(1);
    expect(await get(tm, '/simple/dep/')).toMatchObject({ status: 502, reason: 'upstream-status-500' });
    expect(errors.count('/simple/dep/')).toBe(2);
    expect(storedFor(errors.url)).toEqual([]);
  });

  it('stores nothing of a page cut short or one that is not a simple-index page', async () => {
    const broken = await fault((req, res) => {
      if (req.url === '/simple/cut/') {
        res.writeHead(200, { 'content-type': 'application/vnd.pypi.simple.v1+json', 'content-length': '1000', etag: '"cut"' });
        res.write('{"meta": {"api-version": "1.1"}, "name": "cut", "fi');
        setImmediate(() => res.socket?.destroy());
        return;
      }
      res.writeHead(200, { 'content-type': 'application/vnd.pypi.simple.v1+json', etag: '"bad"' });
      res.end('{"meta": {"api-version": "1.1"}, "name": "bad", "files": "nope"}');
    });
    const tm = await machine(broken.url);
    expect(await get(tm, '/simple/cut/')).toMatchObject({ status: 502, reason: 'upstream-unreachable' });
    expect(await get(tm, '/simple/bad/')).toMatchObject({ status: 502, reason: 'upstream-invalid' });
    expect(storedFor(broken.url)).toEqual([]);
  });

  it('leaves out files without an upload time by default, serves them when told to, and says so', async () => {
    const dir = tempDir('index-missing-');
    const names = writeDepWheels(dir);
    const manifest = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as { files: Record<string, Record<string, unknown>> };
    manifest.files[names.get('1.0')!]!['upload-time'] = null;
    writeFileSync(join(dir, 'index.json'), JSON.stringify(manifest));
    const local = await startLocalIndex({ dir });
    try {
      const strict = await machine(local.url, { store: null });
      expect(json(await get(strict, '/simple/dep/')).files.map((f) => f.filename)).toEqual([names.get('2.0'), names.get('2.0.1')]);
      expect(strict.problems()).toEqual([
        expect.objectContaining({
          reason: 'upload-time-missing',
          message: expect.stringMatching(/1 of 4 files of dep have no upload time; left out/),
        }),
      ]);
      const lenient = await machine(local.url, { store: null, missingUploadTime: 'include' });
      expect(json(await get(lenient, '/simple/dep/')).files.map((f) => f.filename)).toEqual([
        names.get('1.0'),
        names.get('2.0'),
        names.get('2.0.1'),
      ]);
      expect(lenient.problems()).toEqual([
        expect.objectContaining({ reason: 'upload-time-missing', message: expect.stringMatching(/served anyway/) }),
      ]);
    } finally {
      await local.close();
    }
  });

  it('serves nothing from an HTML-only index while a cutoff applies (no upload times), everything without one', async () => {
    const dir = tempDir('index-html-');
    const names = writeDepWheels(dir);
    const html = await startLocalIndex({ dir, formats: 'html' });
    try {
      const dated = await machine(html.url, { store: null });
      expect(json(await get(dated, '/simple/dep/')).files).toEqual([]);
      expect(dated.problems()).toEqual([
        expect.objectContaining({
          reason: 'upload-time-missing',
          message: expect.stringMatching(
            /4 of 4 files of dep have no upload time \(the upstream answered HTML, which carries none\); left out/,
          ),
        }),
      ]);
      const undated = await machine(html.url, { store: null, cutoff: null });
      const page = json(await get(undated, '/simple/dep/'));
      expect(page.files.map((f) => f.filename)).toEqual([...names.values()]);
      expect(page.files[2]!.yanked).toBe('broke the API of 2.0');
      const download = await get(undated, page.files[0]!.url);
      expect(download.body.equals(readFileSync(join(dir, names.get('1.0')!)))).toBe(true);
      expect(undated.served()).toEqual([expect.objectContaining({ filename: names.get('1.0'), uploadTime: null })]);
    } finally {
      await html.close();
    }
  });

  it('refuses a file whose bytes do not have the listed hash: a 502 before any byte, a cut transfer after', async () => {
    const small = Buffer.from('not the wheel the index promised');
    const large = Buffer.alloc(4 * 1024 * 1024, 7);
    const liar = await fault((req, res, origin) => {
      if (req.url === '/simple/dep/') {
        const entry = (filename: string, size: number) => ({
          filename,
          url: `${origin}/f/${filename}`,
          hashes: { sha256: '0'.repeat(64) },
          size,
          'upload-time': '2023-01-01T00:00:00Z',
        });
        res.writeHead(200, { 'content-type': 'application/vnd.pypi.simple.v1+json' });
        res.end(
          JSON.stringify({
            meta: { 'api-version': '1.1' },
            name: 'dep',
            versions: ['1.0', '1.1'],
            files: [entry('dep-1.0-py3-none-any.whl', small.length), entry('dep-1.1-py3-none-any.whl', large.length)],
          }),
        );
        return;
      }
      const body = req.url?.includes('1.0') ? small : large;
      res.writeHead(200, { 'content-length': String(body.length) });
      // In pieces, so that the time machine has passed bytes on before the end.
      let at = 0;
      const next = () => {
        if (at >= body.length) return void res.end();
        const piece = body.subarray(at, (at += 256 * 1024));
        if (res.write(piece)) setImmediate(next);
        else res.once('drain', next);
      };
      next();
    });
    const tm = await machine(liar.url, { timeoutMs: 5_000 });
    const page = json(await get(tm, '/simple/dep/'));
    const first = await get(tm, page.files[0]!.url);
    expect(first).toMatchObject({ status: 502, reason: 'hash-mismatch' });
    const second = await get(tm, page.files[1]!.url);
    expect(second.status).toBe(200);
    expect(second.complete).toBe(false);
    expect(second.body.length).toBeLessThan(large.length);
    expect(tm.served()).toEqual([]);
    expect(tm.problems().map((p) => [p.reason, p.filename])).toEqual([
      ['hash-mismatch', 'dep-1.0-py3-none-any.whl'],
      ['hash-mismatch', 'dep-1.1-py3-none-any.whl'],
    ]);
  });

  it('cuts a download whose upstream stops sending, naming the timeout', async () => {
    const stall = await fault((req, res, origin) => {
      if (req.url === '/simple/dep/') {
        res.writeHead(200, { 'content-type': 'application/vnd.pypi.simple.v1+json' });
        res.end(
          JSON.stringify({
            meta: { 'api-version': '1.0' },
            name: 'dep',
            files: [
              {
                filename: 'dep-1.0.tar.gz',
                url: `${origin}/f/dep-1.0.tar.gz`,
                hashes: { sha256: 'a'.repeat(64) },
                'upload-time': '2023-01-01T00:00:00Z',
              },
            ],
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-length': '100000' });
      res.write(Buffer.alloc(1000));
    });
    const tm = await machine(stall.url);
    const answer = await get(tm, '/files/dep/dep-1.0.tar.gz');
    expect(answer).toMatchObject({ status: 502, reason: 'upstream-timeout' });
    expect(tm.problems()).toEqual([expect.objectContaining({ reason: 'upstream-timeout', filename: 'dep-1.0.tar.gz', refused: true })]);
    expect(tm.served()).toEqual([]);
  });

  it('removes its socket directory when closed', async () => {
    const tm = await machine(`dir:${tempDir('index-empty-')}`);
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(tm.socketDir, 'index_forward.py'))).toBe(true);
    await tm.close();
    expect(existsSync(tm.socketDir)).toBe(false);
  });
});
