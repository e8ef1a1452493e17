import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../cache/store.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { indexAccess } from '../../pipeline/services/package-index/build-access.js';
import { startLocalIndex, type LocalIndex } from '../../pipeline/services/package-index/local-index.js';
import { startTimeMachine, type TimeMachine } from '../../pipeline/services/package-index/time-machine.js';
import { writeDepWheels } from '../fakes/dep-wheels.js';
import { startFaultServer } from '../fakes/index-faults.js';
import { memoryLogger, tempDir } from '../helpers/index.js';
import { testLabel } from './harness.js';

const IMAGE = 'perfmine/base:bookworm';
const label = testLabel('index-time-machine');
const docker = new DockerService({ runLabel: label });
const limits = { cpus: 1, memoryMb: 512, pidsLimit: 256 };
const SHOW = `python3 -c "import dep; print('installed dep', dep.VERSION)"`;

/**
 * The base image's own pip (23.0.1, Python 3.11) in a container without a network, reaching the
 * time machine only through its mounted socket and the forwarder, in front of a loopback index of
 * generated wheels: dep 1.0 (2023-01), 2.0 (2024-06), 2.0.1 (2024-07, yanked), 3.0 (2026-01).
 */
describe('pip behind the index time machine (real Docker engine, network none)', () => {
  const dir = tempDir('index-docker-');
  const names = writeDepWheels(dir);
  const db = openStore(':memory:');
  let index: LocalIndex;

  beforeAll(async () => {
    index = await startLocalIndex({ dir });
  });
  afterAll(async () => {
    await index.close();
    db.close();
    await docker.removeLabelled(label);
  }, 60_000);

  const build = async (
    cutoff: string | null,
    commands: readonly string[],
    options: { upstream?: string; commit?: { repo: string; tag: string } } = {},
  ) => {
    const tm: TimeMachine = await startTimeMachine({
      upstream: options.upstream ?? index.url,
      cutoff: cutoff === null ? null : new Date(cutoff),
      store: db,
      log: memoryLogger().log,
      timeoutMs: 10_000,
      retries: 1,
    });
    try {
      const access = indexAccess({
        socketDir: tm.socketDir,
        cutoff: tm.cutoff,
        missingUploadTime: 'exclude',
        timeoutSeconds: 10,
        retries: 1,
      });
      const run = await docker.run({
        image: IMAGE,
        cmd: ['bash', '-c', [access.prelude, ...commands].join(' && ')],
        mounts: access.mounts,
        network: 'none',
        timeoutMs: 180_000,
        limits,
        ...(options.commit ? { commit: options.commit } : {}),
      });
      return { run, served: tm.served(), problems: tm.problems() };
    } finally {
      await tm.close();
    }
  };

  it('installs dep 1.0 at a 2023-06 cutoff, and the container reaches nothing but the time machine', async () => {
    const port = new URL(index.url).port;
    const { run, served } = await build('2023-06-01T00:00:00Z', [
      'pip install dep',
      SHOW,
      // The upstream listens on the host's loopback; the container's loopback is its own.
      `python3 -c "import socket; s = socket.socket(); s.settimeout(5); print('upstream', s.connect_ex(('127.0.0.1', ${port})) != 0 and 'unreachable' or 'REACHABLE')"`,
      `python3 -c "import socket; socket.getaddrinfo('pypi.org', 443)" 2>/dev/null && echo 'dns REACHABLE' || echo 'dns unreachable'`,
    ]);
    expect(run.stderr + run.stdout).toContain('installed dep 1.0');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('upstream unreachable');
    expect(run.stdout).toContain('dns unreachable');
    expect(served).toEqual([
      expect.objectContaining({
        project: 'dep',
        version: '1.0',
        filename: names.get('1.0'),
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      }),
    ]);
  });

  it('installs dep 2.0 at a 2024-09 cutoff, passing over the yanked 2.0.1 unless it is pinned', async () => {
    const { run, served } = await build('2024-09-01T00:00:00Z', ['pip install dep', SHOW, 'pip install dep==2.0.1', SHOW]);
    expect(run.exitCode).toBe(0);
    const installed = [...run.stdout.matchAll(/installed dep (\S+)/g)].map((m) => m[1]);
    expect(installed).toEqual(['2.0', '2.0.1']);
    expect(run.stderr).toContain('Reason for being yanked: broke the API of 2.0');
    expect(served.map((s) => s.version)).toEqual(['2.0', '2.0.1']);
  });

  it('installs dep 3.0 without a cutoff', async () => {
    const { run, served } = await build(null, ['pip install dep', SHOW]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('installed dep 3.0');
    expect(served.map((s) => s.filename)).toEqual([names.get('3.0')]);
  });

  it('finds nothing to install before the first upload: pip says no matching distribution, the time machine had no fault', async () => {
    const { run, problems } = await build('2022-01-01T00:00:00Z', ['pip install "dep==1.0"']);
    expect(run.exitCode).not.toBe(0);
    expect(run.stderr).toMatch(/No matching distribution found for dep==1\.0/);
    expect(problems).toEqual([]);
  });

  it('leaves neither the index address nor the mount in an image committed from the build', async () => {
    const commit = { repo: 'perfmine/test-index-time-machine', tag: label };
    const { run } = await build('2023-06-01T00:00:00Z', ['pip install dep'], { commit });
    expect(run.exitCode).toBe(0);
    expect(run.imageId).not.toBeNull();
    const after = await docker.run({
      image: `${commit.repo}:${commit.tag}`,
      cmd: [
        'bash',
        '-c',
        `${SHOW}; echo "mnt entries: $(ls -A /mnt | wc -l)"; echo "index vars: $(env | grep -c -e PIP_INDEX_URL -e UV_)"`,
      ],
      network: 'none',
      timeoutMs: 60_000,
      limits,
    });
    expect(after.stdout).toContain('installed dep 1.0');
    expect(after.stdout).toContain('mnt entries: 0');
    expect(after.stdout).toContain('index vars: 0');
  });

  it('makes pip fail on a file whose bytes do not have the listed hash, and names it', async () => {
    const liar = await startFaultServer((req, res, origin) => {
      if (req.url === '/simple/dep/') {
        res.writeHead(200, { 'content-type': 'application/vnd.pypi.simple.v1+json' });
        res.end(
          JSON.stringify({
            meta: { 'api-version': '1.0' },
            name: 'dep',
            files: [
              {
                filename: names.get('1.0'),
                url: `${origin}/f/${names.get('1.0')}`,
                hashes: { sha256: 'f'.repeat(64) },
                'upload-time': '2023-01-15T09:30:00Z',
              },
            ],
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(300_000, 1));
    });
    try {
      const { run, served, problems } = await build('2023-06-01T00:00:00Z', ['pip install dep'], { upstream: liar.url });
      expect(run.exitCode).not.toBe(0);
      expect(served).toEqual([]);
      expect(problems).toEqual([expect.objectContaining({ reason: 'hash-mismatch', filename: names.get('1.0'), refused: true })]);
    } finally {
      await liar.close();
    }
  });

  it('fails the forwarder with a message when the socket is not mounted', async () => {
    const tm = await startTimeMachine({
      upstream: index.url,
      cutoff: null,
      store: null,
      log: memoryLogger().log,
      timeoutMs: 1_000,
      retries: 0,
    });
    try {
      const access = indexAccess({ socketDir: tm.socketDir, cutoff: null, missingUploadTime: 'exclude', timeoutSeconds: 1, retries: 0 });
      const run = await docker.run({
        image: IMAGE,
        cmd: ['bash', '-c', `${access.startLine}; echo "exit $?"`],
        network: 'none',
        timeoutMs: 60_000,
        limits,
        files: [],
      });
      expect(run.stdout).toMatch(/exit 2/);
      expect(run.stderr).toMatch(/can't open file|cannot reach the package index/);
    } finally {
      await tm.close();
    }
  });
});
