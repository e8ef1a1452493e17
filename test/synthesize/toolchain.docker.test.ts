import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../pipeline/errors.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { ASV_FAKE_PATH } from '../fakes/asv-image.js';
import { tempDir, testEnvironments, testLabel } from './harness.js';

const BASE = 'perfmine/base:bookworm';
const label = testLabel('toolchain');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('toolchain');
const limits = { cpus: 1, memoryMb: 1024, pidsLimit: 256 };
const envs = testEnvironments(docker, limits);

describe('asv from a local wheelhouse (air-gapped hosts; real Docker engine)', () => {
  afterAll(async () => {
    await docker.removeLabelled(label);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('installs asv into the base image with pip --no-index --find-links', async () => {
    // A wheel named asv (the stand-in, packaged offline with Debian's setuptools), as
    // `pip download asv` would leave one in a wheelhouse.
    const wheel = await docker.run({
      image: BASE,
      cmd: [
        'bash',
        '-c',
        'mkdir -p /src/asv_standin /out && cp /perfmine/asv /src/asv_standin/__init__.py && cd /src && printf "%s\\n" "from setuptools import setup" "setup(name=\\"asv\\", version=\\"0.0.0+standin\\", packages=[\\"asv_standin\\"], entry_points={\\"console_scripts\\": [\\"asv=asv_standin:_entry\\"]})" > setup.py && printf "\\ndef _entry():\\n    sys.exit(main(sys.argv[1:]))\\n" >> asv_standin/__init__.py && python3 -m pip wheel -q --no-build-isolation --no-deps -w /out . 2>&1',
      ],
      files: [{ name: 'perfmine/asv', content: readFileSync(ASV_FAKE_PATH, 'utf8') }],
      collect: ['/out'],
      timeoutMs: 120_000,
      limits,
    });
    expect(wheel.exitCode, wheel.stdout + wheel.stderr).toBe(0);
    const wheelhouse = join(dir, 'wheelhouse');
    mkdirSync(wheelhouse);
    const names = [...wheel.files.keys()].map((k) => k.replace(/^out\//, ''));
    expect(names).toEqual(['asv-0.0.0+standin-py3-none-any.whl']);
    for (const [k, data] of wheel.files) writeFileSync(join(wheelhouse, k.replace(/^out\//, '')), data);

    const toolchain = await envs.ensureToolchain(BASE, wheelhouse);
    expect(toolchain.image).toMatch(/^perfmine\/toolchain:[0-9a-f]{16}$/);
    const version = await docker.run({ image: toolchain.image, cmd: ['asv', '--version'], timeoutMs: 60_000, limits });
    expect(version.stdout.trim()).toBe('asv 0.0.0+perfmine.standin');
    // The same base and wheelhouse give the same image, without a build.
    expect((await envs.ensureToolchain(BASE, wheelhouse)).image).toBe(toolchain.image);
  }, 300_000);

  it('refuses a wheelhouse without asv, and a base image that does not exist, with the fix', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    writeFileSync(join(empty, 'other-1.0-py3-none-any.whl'), '');
    await expect(envs.ensureToolchain(BASE, empty)).rejects.toThrow(ConfigError);
    await expect(envs.ensureToolchain('perfmine/base:does-not-exist', null)).rejects.toMatchObject({
      reason: 'no-base-image',
      fix: expect.stringContaining('scripts/build-base-image.sh'),
    });
  });

  it('leaves no perfmine container of this run behind', async () => {
    expect(await docker.containers(label)).toEqual([]);
  });
});
