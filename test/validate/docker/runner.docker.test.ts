import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../../pipeline/metrics.js';
import { DockerService } from '../../../pipeline/services/docker.js';
import { parseResultsFile } from '../../../pipeline/concepts/asv/index.js';
import { parseSnapshotComparison, parseSnapshotRecord } from '../../../stages/validate/correctness/snapshot.js';
import { compareTests, readPytestRun } from '../../../stages/validate/correctness/tests.js';
import { DockerMeasurementRunner } from '../../../stages/validate/docker-runner.js';
import { measurementSchedule } from '../../../stages/validate/protocol/schedule.js';
import type { CandidateEnvironment } from '../../../stages/validate/runner-port.js';
import { Environments, type BuildSettings } from '../../../pipeline/services/environments/environment.js';
import { envImageTag, expertImageTag, imageSlug } from '../../../pipeline/services/environments/image-names.js';
import type { SynthesizeOutput } from '../../../pipeline/concepts/records/synthesize-output.js';
import { ASV_FAKE_IMAGE, ensureAsvFakeImage } from '../../fakes/asv-image.js';
import { memoryLogger, tempDir, testLabel } from '../../synthesize/harness.js';
import { writeToyProject } from '../snapshot/suite.js';

/**
 * The Docker measurement runner against the real engine, on an environment made by synthesize's
 * machinery (repository tier from a local clone, the checkout at /repo built by its
 * docker_build.sh and verified) in the stand-in asv image. Proves the expert image (built and
 * verified with the patch, the build script rerun on the patched tree), fresh-container asv
 * invocations without network, pytest and the snapshot helper in the images, and image cleanup.
 */
const REPO = 'fixture/toy';
const label = testLabel('validate-runner');
const docker = new DockerService({ runLabel: label });
const limits = { cpus: 1, memoryMb: 1024, pidsLimit: 256 };
const build: BuildSettings = {
  limits,
  timeoutsMs: { repoImage: 300_000, build: 240_000, import: 60_000, asv: 120_000, pytest: 120_000, tamper: 60_000, tool: 60_000 },
  tailChars: 8000,
  buildNetwork: 'none',
  index: null,
  store: null,
  // The toy suite has a setup_cache benchmark, which the stand-in's `asv check` does not know.
  asvDiscover: 'just-discover',
};
const { log } = memoryLogger();
const metrics = new Metrics();
const runner = new DockerMeasurementRunner({ docker, limits, build, wheelhouse: null, log, metrics });
const scratch = tempDir('validate-runner');

// Puts the checkout on the path, and records (outside the tracked tree) which toy.py it was built from.
const BUILD_SCRIPT = `#!/usr/bin/env bash
set -euo pipefail
cd /repo
PY="\${PERFMINE_PYTHON:-python3}"
site="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo /repo > "$site/perfmine-repo.pth"
sha256sum toy.py > /perfmine/built-from.txt
`;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' },
  });

let base = '';
let patch = '';
let synthesized: SynthesizeOutput;

function env(overrides: Partial<CandidateEnvironment> = {}): CandidateEnvironment {
  return {
    key: `${REPO}#7`,
    number: 7,
    baseImage: synthesized.imageTag,
    synthesized,
    repoDir: '/repo',
    python: 'python3.11',
    env: { OMP_NUM_THREADS: '1' },
    network: false,
    ...overrides,
  };
}

const inImage = (image: string, script: string) =>
  docker.run({ image, cmd: ['bash', '-c', script], workingDir: '/repo', timeoutMs: 60_000, limits });

beforeAll(async () => {
  await ensureAsvFakeImage();
  const repo = join(scratch, 'repo');
  writeToyProject(repo);
  git(scratch, 'init', '-q', '-b', 'main', repo);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'base');
  base = git(repo, 'rev-parse', 'HEAD').trim();
  writeToyProject(repo, { expert: true });
  patch = git(repo, 'diff');
  git(repo, 'checkout', '-q', '--', '.');

  const envs = new Environments(docker, build, log);
  const repoImage = await envs.ensureRepoImage(REPO, { kind: 'git', path: repo }, ASV_FAKE_IMAGE);
  const sourceImage = await envs.sourceFor(REPO, base, { kind: 'git', path: repo }, ASV_FAKE_IMAGE);
  const imageTag = envImageTag(REPO, base);
  const made = await envs.buildAndVerify(
    {
      repo: REPO,
      sha: base,
      script: BUILD_SCRIPT,
      sourceImage,
      baseImage: ASV_FAKE_IMAGE,
      importName: 'toy',
      asvConfigPath: 'asv.conf.json',
      pythonVersion: '3.11',
    },
    imageTag,
  );
  if (made.failure) throw new Error(`base environment: ${JSON.stringify(made.failure)}`);
  synthesized = {
    repo: REPO,
    sha: base,
    commitDate: '2025-04-01T00:00:00.000Z',
    imageTag,
    script: BUILD_SCRIPT,
    scriptSource: 'template',
    attemptId: 1,
    pythonVersion: '3.11',
    repoImageTag: repoImage,
    baseImage: ASV_FAKE_IMAGE,
    toolchainImage: ASV_FAKE_IMAGE,
    asvConfigPath: 'asv.conf.json',
    importName: 'toy',
    cloneSource: `git:${repo}`,
  };
}, 600_000);

afterAll(async () => {
  await docker.removeLabelled(label);
  rmSync(scratch, { recursive: true, force: true });
}, 120_000);

describe('DockerMeasurementRunner (real engine, synthesize-made environment)', () => {
  it('builds and verifies the expert image, measures both sides in fresh containers, runs pytest and the snapshot, and cleans up', async () => {
    const built = await runner.buildExpert(env(), patch, 300_000);
    expect(built.reading).toEqual({ ok: true });
    const expert = built.image!;
    expect(expert).toMatch(/^perfmine\/expert-fixture-toy:7-attempt-/);

    // HEAD stays at the base commit; the tree is the patched one; the build script ran on it.
    const look = await inImage(expert, 'git rev-parse HEAD; git status --porcelain; sha256sum toy.py; cat /perfmine/built-from.txt');
    const [head, status, hash, builtFrom] = look.stdout.trim().split('\n');
    expect(head).toBe(base);
    // the patch is in the working tree only (nothing of it in the index or the object store)
    expect(status).toBe(' M toy.py');
    expect(builtFrom).toBe(hash);
    const baseHash = (await inImage(synthesized.imageTag, 'sha256sum toy.py')).stdout.trim();
    expect(baseHash).not.toBe(hash);

    const layout = { repoDir: '/repo', configPath: 'asv.conf.json', resultsDir: '.asv/results' };
    const settings = { machine: 'perfmine', bench: null, rounds: 2, attributes: {}, cpuAffinity: null };
    const [a, b] = measurementSchedule(1, 0);
    const onBase = await runner.runInvocation(env(), synthesized.imageTag, a!, layout, settings, 120_000);
    const onExpert = await runner.runInvocation(env(), expert, b!, layout, settings, 120_000);
    expect(onBase.output).toMatchObject({ commit: base, suiteNotImportable: false });
    expect(onBase.output.log).toContain('asv stand-in');
    const baseResults = parseResultsFile(onBase.output.results!, 'base');
    const expertResults = parseResultsFile(onExpert.output.results!, 'expert');
    const measured = (r: typeof baseResults) =>
      r.benchmarks.filter((x) => x.values.some((v) => typeof v === 'number' && Number.isFinite(v))).map((x) => x.key);
    expect(measured(baseResults)).toContain('funcs.time_total');
    // the patch breaks time_fragile on the expert only
    expect(measured(baseResults)).toContain('funcs.time_fragile');
    expect(measured(expertResults)).not.toContain('funcs.time_fragile');
    expect(metrics.get('docker.measureMs')).toBe(onBase.durationMs + onExpert.durationMs);

    const options = { args: [], timeLimitSeconds: 120 };
    const baseTests = readPytestRun(await runner.runTests(env(), synthesized.imageTag, options));
    const expertTests = readPytestRun(await runner.runTests(env(), expert, options));
    if (!baseTests.collected || !expertTests.collected) throw new Error('tests not collected');
    expect(compareTests(baseTests.report, expertTests.report, { base: false, expert: false }).regressions).toEqual([
      { test: 'tests.test_toy::test_total', expert: 'failed' },
    ]);

    const request = { configPath: 'asv.conf.json', bench: null, perCallSeconds: 30, timeLimitSeconds: 120 };
    const recorded = await runner.recordSnapshot(env(), synthesized.imageTag, request);
    expect(parseSnapshotRecord(recorded.json!).workloads).toHaveLength(13);
    const compared = await runner.compareSnapshot(env(), expert, recorded.json!, request);
    expect(parseSnapshotComparison(compared.json!).counts.mismatch).toBe(2);

    await runner.release([expert]);
    expect(await docker.imageExists(expert)).toBe(false);
    expect(await docker.imageExists(synthesized.imageTag)).toBe(true);
  }, 600_000);

  it('keeps an expert image under its lasting name on request', async () => {
    const built = await runner.buildExpert(env({ key: `${REPO}#8`, number: 8 }), patch, 300_000);
    const kept = await runner.keep(env({ number: 8 }), built.image!);
    expect(kept).toBe(expertImageTag(REPO, 8));
    expect(await docker.imageExists(built.image!)).toBe(false);
    expect((await docker.inspectImage(kept))?.labels['org.perfmine.tier']).toBe('expert');
  }, 300_000);

  it('tells a patch that does not apply from a build script that fails, and leaves no image of either', async () => {
    const broken = patch.replace(/^-(.*return sum\(xs\).*)$/m, '-$1 # not in the file');
    const notApplied = await runner.buildExpert(env({ key: `${REPO}#9`, number: 9 }), broken, 300_000);
    expect(notApplied.reading).toMatchObject({ ok: false, reason: 'patch-does-not-apply' });
    expect(notApplied.image).toBeNull();
    const failing = await runner.buildExpert(
      env({ key: `${REPO}#10`, number: 10, synthesized: { ...synthesized, script: '#!/usr/bin/env bash\necho compiling; exit 3\n' } }),
      patch,
      300_000,
    );
    expect(failing.reading).toMatchObject({ ok: false, reason: 'expert-build-failed' });
    if (!failing.reading.ok) expect(failing.reading.detail).toContain('compiling');
    const left = (await docker.images(label)).flatMap((i) => i.RepoTags ?? []).filter((t) => /:(9|10)-attempt-/.test(t));
    expect(left).toEqual([]);
  }, 300_000);

  it('builds the verified base image again (and verifies it) when it is gone', async () => {
    await docker.removeImage(synthesized.imageTag);
    expect(await docker.imageExists(synthesized.imageTag)).toBe(false);
    const built = await runner.buildExpert(env({ key: `${REPO}#12`, number: 12 }), patch, 300_000);
    expect(built.reading).toEqual({ ok: true });
    const image = await docker.inspectImage(synthesized.imageTag);
    expect(image?.labels).toMatchObject({ 'org.perfmine.tier': 'env', 'org.perfmine.sha': base });
    expect((await inImage(synthesized.imageTag, 'git rev-parse HEAD; git status --porcelain')).stdout.trim()).toBe(base);
    await runner.release([built.image!]);
  }, 300_000);

  it('rebuilds the source and repository tiers when they are gone (a newer clone untagged them) before building the expert', async () => {
    const sourceTags = async () =>
      (await docker.images())
        .flatMap((i) => i.RepoTags ?? [])
        .filter((t) => t.startsWith(`perfmine/src-${imageSlug(REPO)}:${base.slice(0, 12)}-`));
    for (const t of await sourceTags()) await docker.removeImage(t);
    await docker.removeImage(synthesized.repoImageTag);
    expect(await docker.imageExists(synthesized.repoImageTag)).toBe(false);
    expect(await sourceTags()).toEqual([]);
    const built = await runner.buildExpert(env({ key: `${REPO}#11`, number: 11 }), patch, 300_000);
    expect(built.reading).toEqual({ ok: true });
    expect(await docker.imageExists(synthesized.repoImageTag)).toBe(true);
    expect(await sourceTags()).toHaveLength(1);
    await runner.release([built.image!]);
  }, 300_000);
});
