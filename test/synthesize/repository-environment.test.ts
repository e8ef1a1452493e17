import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../../cache/store.js';
import { configSchema } from '../../pipeline/config/schema.js';
import { hashOf } from '../../pipeline/hash.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { normalizePackages, packageTierDockerfile, packageTierTag } from '../../pipeline/services/environments/package-tier.js';
import { synthesizeStage, type SynthesizeInput } from '../../stages/synthesize/index.js';
import { repositoryEnvironment } from '../../pipeline/config/repository-environment.js';
import { buildPythonRepo } from '../fixtures/python-repo.js';
import { gitScope, memoryLogger, seedCandidates, tempDir, testConfig, testContext } from './harness.js';

const dir = tempDir('repository-environment');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('per-repository environments (pure)', () => {
  it('reads repositories."owner/name" from the configuration, refusing what is not a Debian package name', () => {
    const config = configSchema.parse({
      docker: { baseImage: 'perfmine/base:bookworm' },
      repositories: {
        'shapely/shapely': { debianPackages: ['libgeos-dev', 'cython3', 'libgeos-dev'] },
        'pydata/xarray': { baseImage: 'perfmine/base:trixie', pythonVersions: ['3.13'], pytestArgs: ['-o', 'addopts='] },
      },
    });
    expect(repositoryEnvironment(config, 'Shapely/Shapely')).toEqual({
      baseImage: 'perfmine/base:bookworm',
      debianPackages: ['cython3', 'libgeos-dev'],
      pythonVersions: null,
      setting: 'repositories."shapely/shapely"',
      pytestArgs: [],
      asvPythons: 'require',
    });
    expect(repositoryEnvironment(config, 'pydata/xarray')).toEqual({
      baseImage: 'perfmine/base:trixie',
      debianPackages: [],
      pythonVersions: ['3.13'],
      setting: 'repositories."pydata/xarray"',
      pytestArgs: ['-o', 'addopts='],
      asvPythons: 'require',
    });
    expect(repositoryEnvironment(config, 'networkx/networkx')).toEqual({
      baseImage: 'perfmine/base:bookworm',
      debianPackages: [],
      pythonVersions: null,
      setting: null,
      pytestArgs: [],
      asvPythons: 'require',
    });

    expect(configSchema.safeParse({ repositories: { 'a/b': { debianPackages: ['libgeos-dev; rm -rf /'] } } }).success).toBe(false);
    expect(configSchema.safeParse({ repositories: { 'a/b': { debianPackages: ['GEOS'] } } }).success).toBe(false);
    expect(configSchema.safeParse({ repositories: { 'a/b': { packages: ['x'] } } }).success).toBe(false);
    expect(configSchema.safeParse({ repositories: { 'not a repo': {} } }).success).toBe(false);
  });

  it('names the tier by base image and package list (in any order), and installs exactly the list', () => {
    const a = packageTierTag('shapely/shapely', 'sha256:base1', ['libgeos-dev', 'cython3']);
    expect(a).toMatch(/^perfmine\/pkgs-shapely-shapely:[0-9a-f]{16}$/);
    expect(packageTierTag('shapely/shapely', 'sha256:base1', ['cython3', 'libgeos-dev', 'cython3'])).toBe(a);
    expect(packageTierTag('shapely/shapely', 'sha256:base2', ['libgeos-dev', 'cython3'])).not.toBe(a);
    expect(packageTierTag('shapely/shapely', 'sha256:base1', ['libgeos-dev'])).not.toBe(a);
    expect(normalizePackages(['b', 'a', 'b'])).toEqual(['a', 'b']);
    expect(packageTierDockerfile('perfmine/base:bookworm', ['libgeos-dev', 'cython3'])).toBe(
      [
        'FROM perfmine/base:bookworm',
        'ENV DEBIAN_FRONTEND=noninteractive',
        'RUN apt-get update \\',
        ' && apt-get install -y --no-install-recommends cython3 libgeos-dev \\',
        ' && rm -rf /var/lib/apt/lists/*',
        '',
      ].join('\n'),
    );
    expect(() => packageTierDockerfile('b', ['x && curl evil'])).toThrow(RangeError);
  });
});

describe("synthesize's plan: a repository's own base image and packages change only that repository's inputs", () => {
  it('gives the listed repository its base image and packages, and leaves the others as without the setting', async () => {
    const fixture = buildPythonRepo({ dir: join(dir, 'repo'), eras: [{ era: 'setup-py', commits: 3 }] });
    const db = openStore(':memory:');
    seedCandidates(db, 'acme/geo', fixture.commits, [0]);
    seedCandidates(db, 'acme/plain', fixture.commits, [1]);
    const docker = new DockerService({ runLabel: 'unused' });
    const { log } = memoryLogger();
    const plan = async (repositories: Record<string, unknown>) => {
      const config = testConfig(join(dir, 'unused.db'), { repositories });
      const ctx = testContext({ db, config, docker, log });
      const items = await synthesizeStage.plan(ctx, gitScope(fixture.path));
      return new Map(items.map((i) => [i.repo, i.input as SynthesizeInput]));
    };
    const before = await plan({});
    const after = await plan({
      'acme/geo': {
        baseImage: 'perfmine/base:trixie',
        pythonVersions: ['3.13'],
        debianPackages: ['libhdf5-dev', 'gfortran'],
        pytestArgs: ['-o', 'addopts='],
        asvPythons: 'prefer',
      },
    });
    expect(after.get('acme/geo')).toMatchObject({
      baseImage: 'perfmine/base:trixie',
      pythonVersions: ['3.13'],
      debianPackages: ['gfortran', 'libhdf5-dev'],
      pytestArgs: ['-o', 'addopts='],
      asvPythons: 'prefer',
    });
    expect(before.get('acme/geo')!.pytestArgs).toBeUndefined();
    expect(before.get('acme/geo')!.asvPythons).toBeUndefined();
    expect(before.get('acme/geo')!.pythonVersions).toEqual(['3.11']);
    expect(before.get('acme/geo')!.debianPackages).toBeUndefined();
    expect(hashOf(after.get('acme/geo'))).not.toBe(hashOf(before.get('acme/geo')));
    // the other repository's input, and so its hash, is exactly what it was
    expect(after.get('acme/plain')).toEqual(before.get('acme/plain'));
    expect(hashOf(after.get('acme/plain'))).toBe(hashOf(before.get('acme/plain')));
    db.close();
  });
});
