import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runStage } from '../../pipeline/runner.js';
import { synthesizeOutputSchema } from '../../pipeline/concepts/records/synthesize-output.js';
import { synthesizeStage } from '../../stages/synthesize/index.js';
import { ASV_FAKE_IMAGE } from '../fakes/asv-image.js';
import { gitScope, oneCandidateSuite, testConfig, testContext } from './harness.js';

/**
 * A repository that needs a system library (its package refuses to import without GEOS, as
 * shapely does): its environment fails on the base image, and is verified once the repository
 * lists `libgeos-dev` under `repositories."owner/name".debianPackages`, built on a tier of its
 * own (the base image + apt-get install from Debian's mirror).
 */
const REPO = 'fixture/geos';

const NEEDS_GEOS = [
  'import shutil',
  '',
  'if shutil.which("geos-config") is None:',
  '    raise ImportError("fixpkg needs the GEOS library (geos-config not found)")',
  'from fixpkg.core import REVISION, checksum, total  # noqa: F401,E402',
  '',
].join('\n');

const suite = oneCandidateSuite('package-tier', REPO, { 'fixpkg/__init__.py': NEEDS_GEOS });

describe("a repository's Debian packages in a tier of their own (real Docker engine, Debian's mirror)", () => {
  it('fails without the package, verifies with it, and records the tier it built on', async () => {
    const { db, docker, dir, log, lines, fixture } = suite;
    const base = testConfig(join(dir, 'perfmine.db'), { llm: { mode: 'none' } });
    const without = await runStage(testContext({ db, config: base, docker, log }), synthesizeStage, gitScope(fixture.path));
    expect(without).toMatchObject({ ran: 1, dropped: { 'no-verified-script': 1 } });

    const config = testConfig(join(dir, 'perfmine.db'), {
      llm: { mode: 'none' },
      repositories: { [REPO]: { debianPackages: ['libgeos-dev'] } },
    });
    const ctx = testContext({ db, config, docker, log });
    const report = await runStage(ctx, synthesizeStage, gitScope(fixture.path));
    if (report.done !== 1) console.log(lines.join('').slice(-6000));
    expect(report).toMatchObject({ ran: 1, done: 1 });
    const output = synthesizeOutputSchema.parse(ctx.ledger.get('synthesize', `${REPO}@${fixture.commits[0]!.sha}`)!.output);
    expect(output.baseImage).toMatch(/^perfmine\/pkgs-fixture-geos:[0-9a-f]{16}$/);
    expect(output.packageTier).toMatchObject({ baseImage: ASV_FAKE_IMAGE, debianPackages: ['libgeos-dev'] });
    const tier = await docker.inspectImage(output.baseImage);
    expect(tier?.labels['org.perfmine.packages']).toBe('libgeos-dev');
    // its lock: libgeos-dev and the libraries apt pulled in with it, at the versions the environment holds
    const lock = output.packageTier!.debianLock!;
    expect(tier?.labels['org.perfmine.debian-lock']).toBe(lock.join(' '));
    expect(lock.filter((e) => /^libgeos/.test(e)).length).toBeGreaterThan(1);
    const versions = await docker.run({
      image: output.imageTag,
      cmd: ['dpkg-query', '-W', '-f', '${Package}=${Version}\\n', ...lock.map((e) => e.split('=')[0]!)],
      timeoutMs: 60_000,
      limits: { cpus: 1, memoryMb: 512, pidsLimit: 128 },
    });
    expect(versions.stdout.trim().split('\n').sort()).toEqual([...lock].sort());
    const geos = await docker.run({
      image: output.imageTag,
      cmd: ['geos-config', '--version'],
      timeoutMs: 60_000,
      limits: { cpus: 1, memoryMb: 512, pidsLimit: 128 },
    });
    expect(geos.exitCode).toBe(0);
    expect(geos.stdout.trim()).toMatch(/^\d+\.\d+/);
  }, 900_000);
});
