import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobRef } from '../../cache/blobs.js';
import { openStore } from '../../cache/store.js';
import type { EnvironmentLock } from '../../pipeline/concepts/records/environment-lock.js';
import {
  isBinaryTaskPath,
  isPublicIndex,
  lockedFiles,
  vendorsWheels,
  wheelsCheckFile,
  type VendoredFile,
} from '../../pipeline/concepts/vendored-wheels.js';
import { packagePath } from '../../pipeline/package-root.js';
import { sourceTierFiles } from '../../pipeline/services/environments/source-tier.js';
import { writeDistributions } from '../../pipeline/services/package-index/dist-directory.js';
import { startLocalIndex, type LocalIndex } from '../../pipeline/services/package-index/local-index.js';
import { startTimeMachine, type TimeMachine } from '../../pipeline/services/package-index/time-machine.js';
import { buildWheel } from '../../pipeline/services/package-index/wheel.js';
import { contentBytes, contentDigest } from '../../pipeline/services/verifier/file-content.js';
import { assembleRow } from '../../stages/emit/row.js';
import { taskDockerfile } from '../../stages/emit/task-files.js';
import { startFaultServer } from '../fakes/index-faults.js';
import { memoryLogger, tempDir } from '../helpers/index.js';

/**
 * Issue 36, the parts without Docker: which folders carry their lock's files, which files, the
 * Dockerfile lines that install them with no index and check them against the lock, the check on
 * every write that refuses a file whose bytes are not the ones recorded, the index time machine
 * keeping the bytes it serves, and the verifier's pip settings for its side builds.
 */

const sha = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

const LOCK: EnvironmentLock = {
  python: '3.11.2',
  cutoff: '2025-03-02T10:00:00.000Z',
  upstream: 'http://127.0.0.1:40000/simple/',
  distributions: [
    { name: 'numtheory', version: '1.0', source: 'index', filename: 'numtheory-1.0-py3-none-any.whl', sha256: 'b'.repeat(64) },
    { name: 'fastmath', version: '0.1.0', source: 'editable', filename: null, sha256: null },
    { name: 'pytest', version: '7.2.1', source: 'image', filename: null, sha256: null },
  ],
  build: [
    { name: 'cython', version: '3.0.0', filename: 'cython-3.0.0.tar.gz', sha256: 'c'.repeat(64) },
    { name: 'aardvark', version: null, filename: 'aardvark-1.0-py3-none-any.whl', sha256: 'a'.repeat(64) },
  ],
};

describe('which folders carry their lock’s files, and which files', () => {
  it('auto carries them for an index no one else can reach (loopback, plain http, dir:), not for a public https one', () => {
    expect(isPublicIndex('https://pypi.org/simple/')).toBe(true);
    expect(isPublicIndex('https://mirror.example.org:8443/pypi/simple/')).toBe(true);
    for (const local of [
      'http://127.0.0.1:40000/simple/',
      'https://127.0.0.1/simple/',
      'https://localhost/simple/',
      'https://[::1]:3141/',
      'http://mirror.example.org/simple/',
      'dir:/srv/wheels',
      'not a url',
    ])
      expect(isPublicIndex(local), local).toBe(false);
    expect(isPublicIndex(null)).toBe(false);
    expect(vendorsWheels('auto', 'http://127.0.0.1:40000/simple/')).toBe(true);
    expect(vendorsWheels('auto', 'dir:/srv/wheels')).toBe(true);
    expect(vendorsWheels('auto', 'https://pypi.org/simple/')).toBe(false);
    expect(vendorsWheels('auto', null)).toBe(false);
    expect(vendorsWheels('always', 'https://pypi.org/simple/')).toBe(true);
    expect(vendorsWheels('never', 'dir:/srv/wheels')).toBe(false);
  });

  it('takes the index distributions and the build requirements, each file once, sorted by name', () => {
    const withDuplicate: EnvironmentLock = {
      ...LOCK,
      build: [...LOCK.build, { name: 'numtheory', version: '1.0', filename: 'numtheory-1.0-py3-none-any.whl', sha256: 'b'.repeat(64) }],
    };
    expect(lockedFiles(withDuplicate)).toEqual({
      files: [
        { filename: 'aardvark-1.0-py3-none-any.whl', sha256: 'a'.repeat(64) },
        { filename: 'cython-3.0.0.tar.gz', sha256: 'c'.repeat(64) },
        { filename: 'numtheory-1.0-py3-none-any.whl', sha256: 'b'.repeat(64) },
      ],
      problems: [],
    });
    expect(lockedFiles({ ...LOCK, distributions: [], build: [] })).toEqual({ files: [], problems: [] });
  });

  it('names what cannot be carried: no file, a path for a name, a malformed hash, one name with two hashes', () => {
    const bad: EnvironmentLock = {
      ...LOCK,
      distributions: [
        { name: 'a', version: '1', source: 'index', filename: null, sha256: null },
        { name: 'b', version: '1', source: 'index', filename: '../b-1.tar.gz', sha256: 'b'.repeat(64) },
        { name: 'c', version: '1', source: 'index', filename: 'c-1.tar.gz', sha256: 'C'.repeat(64) },
        { name: 'd', version: '1', source: 'index', filename: 'd 1.tar.gz', sha256: 'd'.repeat(64) },
      ],
      build: [
        { name: 'e', version: '1', filename: 'e-1.tar.gz', sha256: 'e'.repeat(64) },
        { name: 'e', version: '1', filename: 'e-1.tar.gz', sha256: 'f'.repeat(64) },
      ],
    };
    const { files, problems } = lockedFiles(bad);
    expect(files.map((f) => f.filename)).toEqual(['e-1.tar.gz']);
    expect(problems).toEqual([
      'a==1: the lock records no file for it',
      'b==1: "../b-1.tar.gz" is not a plain file name',
      `c==1: c-1.tar.gz: not a SHA-256: "${'C'.repeat(64)}"`,
      'd==1: "d 1.tar.gz" is not a plain file name',
      'e-1.tar.gz: the lock gives it two hashes',
    ]);
  });

  it('writes sha256sum’s check file, and knows the folder’s binary paths', () => {
    const files: VendoredFile[] = [
      { filename: 'a-1.whl', sha256: 'a'.repeat(64) },
      { filename: 'b-2.tar.gz', sha256: 'b'.repeat(64) },
    ];
    expect(wheelsCheckFile(files)).toBe(`${'a'.repeat(64)}  a-1.whl\n${'b'.repeat(64)}  b-2.tar.gz\n`);
    expect(['source/repo.bundle', 'source/modules/x.bundle', 'wheels/a-1.whl'].every(isBinaryTaskPath)).toBe(true);
    expect(['wheels.sha256', 'lock.json', 'perfmine/bench/task.json', 'Dockerfile'].some(isBinaryTaskPath)).toBe(false);
  });
});

describe('the Dockerfile of a folder that carries its lock’s files', () => {
  const row = assembleRow({
    repo: 'demo/fastmath',
    number: 101,
    baseSha: 'a'.repeat(40),
    mergeSha: 'f'.repeat(40),
    createdAt: '2025-04-02T10:00:00Z',
    mergedAt: '2025-04-03T10:00:00Z',
    problemStatement: 'fib is slow',
    patch: 'diff --git a/x b/x\n',
    imageName: 'perfmine/demo__fastmath:101',
    buildScript: '#!/usr/bin/env bash\n',
    workloads: [],
    category: null,
    difficulty: null,
    classifier: 'none',
  });
  const perfmineFiles = sourceTierFiles();
  const wheels = lockedFiles(LOCK).files;
  const lines = (w: readonly VendoredFile[]) =>
    taskDockerfile({ row, baseImage: 'perfmine/base:bookworm', pythonVersion: '3.11', perfmineFiles, lock: LOCK, wheels: w }).split('\n');
  const after = (all: string[], line: string) => all.slice(all.indexOf(line));

  it('copies and checks the files against the lock, installs from them with no index, and gives the build script them and no index', () => {
    const all = lines(wheels);
    expect(after(all, 'COPY requirements.lock constraints.txt lock.json wheels.sha256 /perfmine/')).toEqual([
      'COPY requirements.lock constraints.txt lock.json wheels.sha256 /perfmine/',
      'COPY wheels/ /perfmine/wheels/',
      `RUN cd /perfmine/wheels && sha256sum --strict --quiet --check /perfmine/wheels.sha256 && { [ "$(ls -A | wc -l)" -eq 3 ] || { echo 'wheels/ holds files wheels.sha256 does not name' >&2; exit 1; }; }`,
      'RUN "${PERFMINE_PYTHON:-python3}" -m pip install --no-cache-dir --no-index --find-links /perfmine/wheels --require-hashes --no-deps -r /perfmine/requirements.lock',
      'COPY docker_build.sh /perfmine/docker_build.sh',
      'WORKDIR /repo',
      'RUN PIP_NO_INDEX=1 PIP_FIND_LINKS=/perfmine/wheels PIP_CONSTRAINT=/perfmine/constraints.txt bash /perfmine/docker_build.sh && bash /perfmine/seal.sh modules && "${PERFMINE_PYTHON:-python3}" /perfmine/perfmine_lock.py check /perfmine/lock.json',
      '',
    ]);
    // no index anywhere: no build argument, and the header says so
    expect(all.join('\n')).not.toContain('PIP_INDEX_URL');
    expect(all.find((l) => l.startsWith('#   docker build'))).toBe(
      '#   docker build -t perfmine/demo__fastmath:101 .   (no package index: the locked files are in wheels/)',
    );
  });

  it('without them, installs from PIP_INDEX_URL as before', () => {
    const all = lines([]);
    expect(after(all, 'COPY requirements.lock constraints.txt lock.json /perfmine/').slice(0, 3)).toEqual([
      'COPY requirements.lock constraints.txt lock.json /perfmine/',
      'ARG PIP_INDEX_URL=https://pypi.org/simple/',
      'RUN "${PERFMINE_PYTHON:-python3}" -m pip install --no-cache-dir --require-hashes --no-deps -r /perfmine/requirements.lock',
    ]);
    expect(all.join('\n')).not.toMatch(/wheels|PIP_NO_INDEX|PIP_FIND_LINKS/);
  });
});

describe('every write of a stored file checks its bytes against the SHA-256 it is recorded by', () => {
  it('gives the bytes of a blob that has them, and refuses one whose bytes are other (naming the path)', () => {
    const bytes = Buffer.from('the wheel the lock names');
    const good = { sha256: sha(bytes), size: bytes.length, read: () => bytes };
    expect(Buffer.from(contentBytes(good, 'wheels/x.whl'))).toEqual(bytes);
    expect(contentDigest(good)).toBe(sha(bytes));
    const wrong = { ...good, read: () => Buffer.from('another file of the same name') };
    expect(() => contentBytes(wrong, 'wheels/x.whl')).toThrowError(
      expect.objectContaining({
        kind: 'item',
        reason: 'file-hash-mismatch',
        message: expect.stringContaining(`wheels/x.whl: read as sha256:${sha(bytes)}`) as unknown,
      }),
    );
    // text is given as it is
    expect(contentBytes('text')).toBe('text');
  });
});

/** A GET over the time machine's unix socket, the whole body. */
function download(tm: TimeMachine, path: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: tm.socketPath, path, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the index time machine keeps the bytes of the files it serves, when told to', () => {
  const dir = tempDir('vendored-index-');
  let index: LocalIndex;
  let wheel: { filename: string; bytes: Buffer };
  const open: TimeMachine[] = [];

  beforeAll(async () => {
    const built = buildWheel({ name: 'numtheory', version: '1.0', files: { 'numtheory/__init__.py': 'VERSION = "1.0"\n' } });
    wheel = { filename: built.filename, bytes: built.bytes };
    writeDistributions(dir, [{ filename: built.filename, bytes: built.bytes, uploadTime: '2025-03-01T00:00:00Z' }]);
    index = await startLocalIndex({ dir });
  });
  afterAll(async () => {
    for (const tm of open) await tm.close();
    await index?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores a served file once, by the SHA-256 its lock records; without keepFiles, nothing', async () => {
    for (const keepFiles of [true, false]) {
      const db = openStore(':memory:');
      try {
        const tm = await startTimeMachine({
          upstream: index.url,
          cutoff: null,
          store: db,
          keepFiles,
          log: memoryLogger().log,
          timeoutMs: 5_000,
          retries: 0,
        });
        open.push(tm);
        for (let i = 0; i < 2; i++) {
          const got = await download(tm, `/files/numtheory/${wheel.filename}`);
          expect(got.status).toBe(200);
          expect(got.body.equals(wheel.bytes)).toBe(true);
        }
        const served = tm.served();
        expect(served.map((f) => [f.filename, f.sha256])).toEqual([[wheel.filename, sha(wheel.bytes)]]);
        const ref = blobRef(db, sha(wheel.bytes));
        if (keepFiles) {
          expect(ref?.read().equals(wheel.bytes)).toBe(true);
          expect(db.prepare('SELECT COUNT(*) AS n FROM blobs').get()).toEqual({ n: 1 });
        } else expect(ref).toBeNull();
        expect(tm.problems()).toEqual([]);
      } finally {
        db.close();
      }
    }
  });

  it('keeps nothing of a file whose bytes do not have the hash its index lists', async () => {
    const db = openStore(':memory:');
    const body = Buffer.from('not the wheel the index promised');
    const liar = await startFaultServer((req, res, origin) => {
      if (req.url === '/simple/numtheory/') {
        res.writeHead(200, { 'content-type': 'application/vnd.pypi.simple.v1+json' });
        return void res.end(
          JSON.stringify({
            meta: { 'api-version': '1.1' },
            name: 'numtheory',
            versions: ['1.0'],
            files: [
              {
                filename: wheel.filename,
                url: `${origin}/f/${wheel.filename}`,
                hashes: { sha256: sha(wheel.bytes) },
                'upload-time': '2025-03-01T00:00:00Z',
              },
            ],
          }),
        );
      }
      res.writeHead(200, { 'content-length': String(body.length) });
      res.end(body);
    });
    try {
      const tm = await startTimeMachine({
        upstream: liar.url,
        cutoff: null,
        store: db,
        keepFiles: true,
        log: memoryLogger().log,
        timeoutMs: 5_000,
        retries: 0,
      });
      open.push(tm);
      expect((await download(tm, `/files/numtheory/${wheel.filename}`)).status).toBe(502);
      expect(tm.problems().map((p) => p.reason)).toEqual(['hash-mismatch']);
      expect(tm.served()).toEqual([]);
      expect(db.prepare('SELECT COUNT(*) AS n FROM blobs').get()).toEqual({ n: 0 });
    } finally {
      await liar.close();
      db.close();
    }
  });
});

describe('the verifier’s side builds: pip finds the task’s locked files under /tests, and no index', () => {
  const dir = tempDir('vendored-verify-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = (spec: Record<string, unknown>) =>
    JSON.parse(
      execFileSync(
        'python3',
        [
          '-c',
          [
            'import json, sys',
            `sys.path.insert(0, ${JSON.stringify(packagePath('python'))})`,
            'import perfmine_verify as v',
            'spec, tests, staging = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]',
            'v.stage_wheels(spec, tests, staging)',
            'print(json.dumps(v.pip_env(spec, staging)))',
          ].join('\n'),
          JSON.stringify(spec),
          join(dir, 'tests'),
          join(dir, 'staging'),
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    ) as Record<string, string>;

  it('stages tests/wheels/ where every side’s user can read it, and sets PIP_NO_INDEX and PIP_FIND_LINKS beside PIP_CONSTRAINT', () => {
    mkdirSync(join(dir, 'tests', 'wheels'), { recursive: true });
    mkdirSync(join(dir, 'staging'), { recursive: true });
    writeFileSync(join(dir, 'tests', 'wheels', 'numtheory-1.0-py3-none-any.whl'), 'wheel bytes');
    expect(run({ constraints: 'constraints.txt', wheels: 'wheels' })).toEqual({
      PIP_CONSTRAINT: join(dir, 'staging', 'constraints.txt'),
      PIP_NO_INDEX: '1',
      PIP_FIND_LINKS: join(dir, 'staging', 'wheels'),
    });
    expect(readdirSync(join(dir, 'staging', 'wheels'))).toEqual(['numtheory-1.0-py3-none-any.whl']);
    expect(readFileSync(join(dir, 'staging', 'wheels', 'numtheory-1.0-py3-none-any.whl'), 'utf8')).toBe('wheel bytes');
    expect(statSync(join(dir, 'staging', 'wheels')).mode & 0o777).toBe(0o755);
    expect(statSync(join(dir, 'staging', 'wheels', 'numtheory-1.0-py3-none-any.whl')).mode & 0o777).toBe(0o644);
    // a task without them: its constraints only, as before
    expect(run({ constraints: 'constraints.txt' })).toEqual({ PIP_CONSTRAINT: join(dir, 'staging', 'constraints.txt') });
    expect(run({})).toEqual({});
  });

  it('refuses a spec that names locked files the tests folder lacks', () => {
    expect(() => run({ wheels: 'missing' })).toThrow(/names the locked files missing, which are not under/);
  });
});
