import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../cache/store.js';
import { createContext } from '../../pipeline/context.js';
import { readCredentials } from '../../pipeline/credentials.js';
import { SAMPLE_DEPENDENCY, writeSampleIndex } from '../../pipeline/demo/sample-index.js';
import { createSampleRepo, type SampleRepo } from '../../pipeline/demo/sample-repo.js';
import { Metrics } from '../../pipeline/metrics.js';
import { runPipeline } from '../../pipeline/orchestrate.js';
import { runStage } from '../../pipeline/runner.js';
import type { EnvironmentLock } from '../../pipeline/concepts/records/environment-lock.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { scanImage } from '../../pipeline/services/environments/image-scan.js';
import { startLocalIndex, type LocalIndex } from '../../pipeline/services/package-index/local-index.js';
import { contentBytes } from '../../pipeline/services/verifier/file-content.js';
import { harborOptionsOf } from '../../pipeline/services/verifier/options.js';
import {
  harborEnvironmentFiles,
  harborTestsFiles,
  type HarborFile,
  type VerifiableTask,
} from '../../pipeline/services/verifier/verifier-folder.js';
import { monthWindow } from '../../pipeline/window.js';
import { emitStage } from '../../stages/emit/index.js';
import { readTaskFolder } from '../../tasks/replay/task-folder.js';
import { verifiableFolder } from '../../tasks/replay/verify-replay.js';
import { harborTrial, shown, type Trial } from '../helpers/harbor-trial.js';
import { measurementSlot } from '../helpers/measure-slot.js';
import { memoryLogger, tempDir, testConfig, testLabel } from '../synthesize/harness.js';

const execFileP = promisify(execFile);

/**
 * Issue 36 on the real Docker engine: the demo's sample repository, which needs `numtheory` from
 * the demo's own package index, through every stage for #101 (fib, about 1000x) with its builds
 * behind the index time machine in front of that loopback index; then the index is stopped and
 * its directory removed, and emit runs again on its own. The task folder it writes carries
 * numtheory's wheel, byte for byte the one served, from the store, and:
 *
 * - `docker build --network none` of the folder, with no build argument, builds the environment
 *   (the lock installed hash-checked from wheels/, then checked);
 * - a copy whose build script itself needs the index (it downloads numtheory with pip) builds with
 *   no network too (the build step's pip finds wheels/ and no index), and so does its Harbor
 *   environment/; the verifier's own side builds of that script from tests/ find the wheels with
 *   no network (the expert's patch verified: a positive reward), and fail without them (tests/
 *   made without the wheels: the base side does not build, a verifier error);
 * - a copy with a wheel changed by one byte, or with a file the lock does not name, fails to build.
 *
 * The verifier measures 3 rounds: the effect asserted (a 1000x speedup) is far beyond any noise.
 */
measurementSlot('shared');

const REPO = 'fixture/fastmath';
const ID = 'fixture__fastmath-101';
const BASE_IMAGE = 'perfmine/base:bookworm';
const label = testLabel('vendored');
const docker = new DockerService({ runLabel: label, metrics: new Metrics() });
const dir = tempDir('vendored-docker');
const out = join(dir, 'out');
const indexDir = join(dir, 'index');
const { log, lines } = memoryLogger('info');
const tag = (name: string) => `perfmine-test/vendored-${name}:${label}`.toLowerCase();
const built: string[] = [];

/** The build script's own use of the index: a pip download of the locked dependency (it installs nothing). */
const NEEDS_INDEX = `"\${PERFMINE_PYTHON:-python3}" -m pip download --no-deps --dest "$(mktemp -d)" ${SAMPLE_DEPENDENCY}==1.0\n`;

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

let sample: SampleRepo;
let db: Db;
let index: LocalIndex | null = null;
let served: { filename: string; bytes: Buffer };
let folder: string;

/** `docker build --network none` of a directory, no build argument: its exit and output. */
async function buildOffline(context: string, name: string): Promise<{ ok: boolean; out: string }> {
  const image = tag(name);
  built.push(image);
  try {
    const r = await execFileP('docker', ['build', '--network', 'none', '-t', image, context], { maxBuffer: 64 * 1024 * 1024 });
    return { ok: true, out: r.stdout + r.stderr };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

function writeFiles(root: string, files: ReadonlyMap<string, HarborFile>): void {
  for (const [path, file] of files) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    const content = contentBytes(file.content, path);
    writeFileSync(join(root, path), typeof content === 'string' ? content : Buffer.from(content));
    chmodSync(join(root, path), file.mode);
  }
}

/** A copy of the emitted folder whose build script needs the index. */
function needingIndex(name: string): string {
  const copy = join(dir, name);
  cpSync(folder, copy, { recursive: true });
  appendFileSync(join(copy, 'docker_build.sh'), NEEDS_INDEX);
  return copy;
}

beforeAll(async () => {
  sample = createSampleRepo(join(dir, 'fastmath'), '2025-04', { dependency: SAMPLE_DEPENDENCY });
  writeSampleIndex(indexDir, '2025-04');
  const wheel = readdirSync(indexDir).find((f) => f.startsWith(`${SAMPLE_DEPENDENCY}-1.0-`))!;
  served = { filename: wheel, bytes: readFileSync(join(indexDir, wheel)) };
  index = await startLocalIndex({ dir: indexDir });
  const config = testConfig(join(dir, 'perfmine.db'), {
    out,
    llm: { mode: 'none' },
    docker: { baseImage: BASE_IMAGE, cpus: 1, memoryMb: 2048, pidsLimit: 512, concurrency: 1 },
    validate: { harness: { rounds: 4 } },
    synthesize: {
      buildNetwork: 'index',
      index: { upstream: index.url },
      timeouts: { repoImage: 300, build: 240, import: 60, asv: 120, pytest: 120, tamper: 60, tool: 60 },
    },
  });
  db = openStore(join(dir, 'perfmine.db'));
  const ctx = createContext({ config, credentials: readCredentials({}), db, log, metrics: new Metrics(), services: { docker } });
  const scope = { window: monthWindow('2025-04'), repos: [REPO], prs: [101], source: { kind: 'git' as const, path: sample.path } };
  const result = await runPipeline(ctx, scope);
  if (result.reports.some((r) => Object.keys(r.failed).length > 0)) console.log(lines.join(''));
  // the demo's index is gone: emit, run again on its own, has only the store
  await index.close();
  index = null;
  rmSync(indexDir, { recursive: true, force: true });
  const again = await runStage(ctx, emitStage, scope, { force: true });
  expect(again, lines.join('').slice(-3000)).toMatchObject({ done: 1, failed: {} });
  folder = join(out, '2025-04', ID);
}, 3_600_000);

afterAll(async () => {
  await index?.close();
  db?.close();
  for (const image of built) await execFileP('docker', ['rmi', '-f', image]).catch(() => undefined);
  await docker.removeLabelled(label);
  rmSync(dir, { recursive: true, force: true });
}, 300_000);

describe('a demo task folder carries its locked files, and builds with no index (real Docker engine)', () => {
  it('carries numtheory’s wheel as served, after the index is gone, named by the lock with its hash', () => {
    const lock = JSON.parse(readFileSync(join(folder, 'lock.json'), 'utf8')) as EnvironmentLock;
    const numtheory = lock.distributions.find((d) => d.name === SAMPLE_DEPENDENCY)!;
    expect(numtheory).toMatchObject({ version: '1.0', source: 'index', filename: served.filename, sha256: sha256(served.bytes) });
    expect(lock.upstream).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/simple\/$/);
    expect(readdirSync(join(folder, 'wheels'))).toEqual([served.filename]);
    expect(readFileSync(join(folder, 'wheels', served.filename)).equals(served.bytes)).toBe(true);
    expect(readFileSync(join(folder, 'wheels.sha256'), 'utf8')).toBe(`${sha256(served.bytes)}  ${served.filename}\n`);
    expect(readFileSync(join(folder, 'Dockerfile'), 'utf8')).not.toContain('PIP_INDEX_URL');
  });

  it('`docker build --network none` of the folder, no build argument: the environment, with the lock installed and checked, accepted by the outside scan', async () => {
    const r = await buildOffline(folder, 'folder');
    expect(r.ok, r.out.slice(-4000)).toBe(true);
    const check = await docker.run({
      image: tag('folder'),
      cmd: ['bash', '-c', `python3 -c "import ${SAMPLE_DEPENDENCY}, fastmath; print(${SAMPLE_DEPENDENCY}.VERSION)"`],
      network: 'none',
      timeoutMs: 60_000,
      limits: { cpus: 1, memoryMb: 1024, pidsLimit: 256 },
    });
    expect(check.exitCode, check.stderr).toBe(0);
    expect(check.stdout.trim()).toBe('1.0');
    // the image's copy of the wheels (/perfmine/wheels) passes the outside scan a replay makes
    expect((await scanImage({ docker, baseImage: BASE_IMAGE, image: tag('folder') })).verdict).toBe('accepted');
  }, 900_000);

  it('a build script that itself needs the index builds with no network, from the folder and from its Harbor environment/', async () => {
    const copy = needingIndex('needs-index');
    const r = await buildOffline(copy, 'needs-index');
    expect(r.ok, r.out.slice(-4000)).toBe(true);
    const environment = join(dir, 'harbor', ID, 'environment');
    writeFiles(environment, harborEnvironmentFiles(verifiableFolder(readTaskFolder(copy))));
    expect(readdirSync(join(environment, 'wheels'))).toEqual([served.filename]);
    const h = await buildOffline(environment, 'harbor');
    expect(h.ok, h.out.slice(-4000)).toBe(true);
  }, 900_000);

  it('the verifier’s side builds of that script find the wheels under /tests with no network, and fail without them', async () => {
    const task: VerifiableTask = verifiableFolder(readTaskFolder(join(dir, 'needs-index')));
    const options = harborOptionsOf(testConfig(join(dir, 'unused.db'), { docker: { baseImage: BASE_IMAGE, cpus: 2, memoryMb: 2048 } }));
    const attacks = join(dir, 'attacks');
    mkdirSync(attacks, { recursive: true });
    writeFileSync(join(attacks, 'expert.patch'), task.files['expert.patch']!);
    const trial = async (name: string, blobs: VerifiableTask['blobs']): Promise<Trial> => {
      const root = join(dir, 'trials', name);
      writeFiles(join(root, 'tests'), harborTestsFiles({ ...task, blobs }, options));
      chmodSync(join(root, 'tests'), 0o700);
      const t = await harborTrial({
        task: root,
        image: tag('harbor'),
        logs: join(root, 'logs'),
        container: `${label}-${name}`,
        label,
        agent: 'git apply /tmp/attacks/expert.patch',
        attacks,
        rounds: 3,
      });
      console.log(shown(name, t).slice(-3000));
      return t;
    };
    const withWheels = await trial('with-wheels', task.blobs);
    expect(withWheels.agent.code, withWheels.agent.out).toBe(0);
    expect(withWheels.details?.failure ?? null, withWheels.verifier.out.slice(-3000)).toBeNull();
    expect(withWheels.reward, withWheels.verifier.out.slice(-3000)).toMatchObject({ correct: 1, verifier_error: 0 });
    expect(withWheels.reward!['speedup']!).toBeGreaterThan(50);

    // the same tests/ made without the locked files (verify.json names none): the base side cannot get numtheory
    const without = Object.fromEntries(Object.entries(task.blobs).filter(([path]) => !path.startsWith('wheels/')));
    const noWheels = await trial('without-wheels', without);
    expect(noWheels.reward).toMatchObject({ reward: -1, verifier_error: 1 });
    // pip looked for numtheory on an index (PyPI's default: no network) instead of the staged files
    const told = `${noWheels.verifier.out}${JSON.stringify(noWheels.details)}`;
    expect(told).toMatch(/the build script \S+ exited 1 on the base copy/);
    expect(told).toMatch(/Failed to establish a new connection[^\n]*\/simple\/numtheory\//);
  }, 1_800_000);

  it('a wheel changed by one byte, or a file the lock does not name, fails the build', async () => {
    const tampered = join(dir, 'tampered');
    cpSync(folder, tampered, { recursive: true });
    const wheel = join(tampered, 'wheels', served.filename);
    const bytes = readFileSync(wheel);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0xff, bytes.length - 1);
    writeFileSync(wheel, bytes);
    const r = await buildOffline(tampered, 'tampered');
    expect(r.ok).toBe(false);
    expect(r.out).toContain(`${served.filename}: FAILED`);

    const extra = join(dir, 'extra');
    cpSync(folder, extra, { recursive: true });
    writeFileSync(join(extra, 'wheels', `${SAMPLE_DEPENDENCY}-9.0-py3-none-any.whl`), 'not in the lock');
    const e = await buildOffline(extra, 'extra');
    expect(e.ok).toBe(false);
    expect(e.out).toContain('wheels/ holds files wheels.sha256 does not name');
  }, 900_000);
});
