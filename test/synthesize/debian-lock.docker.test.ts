import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerService } from '../../pipeline/services/docker.js';
import { DEBIAN_LOCK_LABEL } from '../../pipeline/services/environments/debian-lock.js';
import { ensurePackageTier, packageTierDockerfile, packageTierTag } from '../../pipeline/services/environments/package-tier.js';
import { exportSealedHistory } from '../../pipeline/services/environments/sealed-history.js';
import { sourceTierFiles } from '../../pipeline/services/environments/source-tier.js';
import type { TarEntry } from '../../pipeline/services/tar.js';
import type { TaskRow } from '../../stages/emit/row.js';
import { taskDockerfile } from '../../stages/emit/task-files.js';
import { startDebianRepository, type DebianRepository } from '../fakes/debian-repository.js';
import { git } from '../fixtures/python-repo.js';
import { tempDir, testLabel } from './harness.js';

/**
 * Issue 36: a repository's package tier locked to exact versions, against real apt and a Debian
 * repository of the test's own on loopback (the only source of a base image made for the test).
 * The tier installs `pfm-app`, which depends on `pfm-dep`: its lock lists both at the versions
 * installed; a task's Dockerfile installs exactly those while the repository also serves a newer
 * `pfm-dep`, and once the repository has only the newer one, the build stops naming the locked
 * version it no longer has.
 */
const REPO = 'fixture/deblock';
const SETTING = `repositories."${REPO}"`;
const label = testLabel('debian-lock');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('debian-lock');
const limits = { cpus: 1, memoryMb: 512, pidsLimit: 128 };
const BASE_TAG = `perfmine-test/debian-lock-base:${label}`;
const TASK_TAG = `perfmine-test/debian-lock-task:${label}`;
const SCRIPT = '#!/usr/bin/env bash\nset -euo pipefail\ndpkg-query -W pfm-app pfm-dep\n';

let mirror: DebianRepository;
let sha = '';
let sealed: Map<string, Buffer>;

/** Installed versions in an image, `name=version` per line. */
async function installed(image: string, names: readonly string[]): Promise<string[]> {
  const run = await docker.run({ image, cmd: ['dpkg-query', '-W', '-f', '${Package}=${Version}\\n', ...names], timeoutMs: 60_000, limits });
  expect(run.exitCode, run.stderr).toBe(0);
  return run.stdout.trim().split('\n');
}

/** The task's build context: its Dockerfile (taskDockerfile), the build script, perfmine's files and the sealed history. */
function taskContext(debianLock: readonly string[]): TarEntry[] {
  const row = { instance_id: 'fixture__deblock-1', image_name: TASK_TAG, base_commit: sha } as TaskRow;
  const perfmineFiles = sourceTierFiles();
  const dockerfile = taskDockerfile({
    row,
    baseImage: 'perfmine/pkgs-fixture-deblock:unused',
    pythonVersion: null,
    perfmineFiles,
    lock: null,
    packageTier: { baseImage: BASE_TAG, debianPackages: ['pfm-app'], debianLock },
  });
  return [
    { name: 'Dockerfile', content: dockerfile },
    { name: 'docker_build.sh', content: SCRIPT },
    ...perfmineFiles,
    ...[...sealed].map(([name, content]) => ({ name, content })),
  ];
}

describe('a package tier locked to exact versions (real Docker engine, real apt, a loopback Debian repository)', () => {
  beforeAll(async () => {
    mirror = await startDebianRepository(dir);
    mirror.add('pfm-dep', '1.0-1');
    mirror.add('pfm-app', '1.0-1', 'pfm-dep (>= 1.0)');
    // in the repository, never installed: not in any lock
    mirror.add('pfm-other', '1.0-1');
    // a base image whose apt reads only the test's repository (builds on it use the host's network)
    const base = await docker.buildImage({
      tag: BASE_TAG,
      context: [
        {
          name: 'Dockerfile',
          content: [
            'FROM perfmine/base:bookworm',
            `RUN rm -rf /etc/apt/sources.list.d && mkdir /etc/apt/sources.list.d && echo '${mirror.sourcesLine}' > /etc/apt/sources.list`,
            '',
          ].join('\n'),
        },
      ],
      timeoutMs: 120_000,
    });
    expect(base.ok, base.log).toBe(true);
    const repo = join(dir, 'src');
    mkdirSync(repo, { recursive: true });
    git(repo, ['init', '-q', '-b', 'main']);
    git(repo, ['config', 'user.name', 'T']);
    git(repo, ['config', 'user.email', 't@t']);
    writeFileSync(join(repo, 'README'), 'deblock\n');
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-qm', 'first']);
    sha = git(repo, ['rev-parse', 'HEAD']);
    sealed = await exportSealedHistory(repo, sha);
  }, 300_000);

  afterAll(async () => {
    await mirror?.close();
    await docker.removeLabelled(label);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  let lock: readonly string[] = [];

  it("records the tier's lock: the package and the dependency apt pulled in, at their versions, in the tier's label", async () => {
    const options = { setting: SETTING, timeoutMs: 300_000, limits, network: 'host' as const };
    const tier = await ensurePackageTier(docker, REPO, BASE_TAG, ['pfm-app'], options);
    expect(tier.image).toMatch(/^perfmine\/pkgs-fixture-deblock:[0-9a-f]{16}$/);
    expect(tier.debianLock).toEqual(['pfm-app=1.0-1', 'pfm-dep=1.0-1']);
    lock = tier.debianLock;
    const facts = await docker.inspectImage(tier.image);
    expect(facts?.labels[DEBIAN_LOCK_LABEL]).toBe('pfm-app=1.0-1 pfm-dep=1.0-1');
    expect(facts?.labels['org.perfmine.packages']).toBe('pfm-app');
    expect(await installed(tier.image, ['pfm-app', 'pfm-dep'])).toEqual(['pfm-app=1.0-1', 'pfm-dep=1.0-1']);

    // the existing tier: the same image, its lock read back from the label
    mirror.add('pfm-dep', '1.1-1');
    const again = await ensurePackageTier(docker, REPO, BASE_TAG, ['pfm-app'], options);
    expect(again).toEqual({ image: tier.image, debianLock: lock });
    expect((await docker.inspectImage(tier.image))?.id).toBe(facts?.id);

    // a tier built before locks (no label): its lock is read from the images with dpkg-query, and the tier is left as it is
    const baseId = (await docker.inspectImage(BASE_TAG))!.id;
    const oldTag = packageTierTag(REPO, baseId, ['pfm-dep']);
    const old = await docker.buildImage({
      tag: oldTag,
      context: [{ name: 'Dockerfile', content: packageTierDockerfile(BASE_TAG, ['pfm-dep']) }],
      network: 'host',
      timeoutMs: 300_000,
    });
    expect(old.ok, old.log).toBe(true);
    const oldTier = await ensurePackageTier(docker, REPO, BASE_TAG, ['pfm-dep'], options);
    expect(oldTier).toEqual({ image: oldTag, debianLock: ['pfm-dep=1.1-1'] });
    const oldFacts = await docker.inspectImage(oldTag);
    expect(oldFacts?.labels[DEBIAN_LOCK_LABEL]).toBeUndefined();
    expect(oldFacts?.id).toBe(old.imageId);
  }, 600_000);

  it("a task's Dockerfile installs exactly the locked versions, though the repository now serves a newer dependency", async () => {
    expect(lock).toEqual(['pfm-app=1.0-1', 'pfm-dep=1.0-1']);
    const built = await docker.buildImage({
      tag: TASK_TAG,
      context: taskContext(lock),
      network: 'host',
      timeoutMs: 300_000,
      tailChars: 64_000,
    });
    expect(built.ok, built.log).toBe(true);
    expect(await installed(TASK_TAG, ['pfm-app', 'pfm-dep'])).toEqual(['pfm-app=1.0-1', 'pfm-dep=1.0-1']);
    // and pfm-other, served too, did not come in
    const other = await docker.run({ image: TASK_TAG, cmd: ['dpkg-query', '-W', 'pfm-other'], timeoutMs: 60_000, limits });
    expect(other.exitCode).not.toBe(0);
    await docker.removeImage(TASK_TAG);
  }, 600_000);

  it('once the repository has replaced the locked version, the build stops naming the package and its locked version', async () => {
    mirror.remove('pfm-dep', '1.0-1');
    const built = await docker.buildImage({
      tag: TASK_TAG,
      context: taskContext(lock),
      network: 'host',
      noCache: true,
      timeoutMs: 300_000,
      tailChars: 64_000,
    });
    expect(built.ok).toBe(false);
    expect(built.log).toContain('the Debian mirror no longer has pfm-dep=1.0-1 (locked by this task); versions of pfm-dep it has: 1.1-1;');
    // pfm-app's locked version is still there: not named; nothing was installed
    expect(built.log).not.toContain('no longer has pfm-app');
    expect(built.log).not.toMatch(/Unpacking pfm-/);
  }, 600_000);
});
