import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerService } from '../../pipeline/services/docker.js';
import type { CommitBuildSpec } from '../../pipeline/services/environments/environment.js';
import { PATCH_DOES_NOT_APPLY_EXIT } from '../../pipeline/services/environments/verification.js';
import { ASV_FAKE_IMAGE, ensureAsvFakeImage } from '../fakes/asv-image.js';
import { buildPythonRepo, correctScript, type PythonRepo } from '../fixtures/python-repo.js';
import { tempDir, testEnvironments, testLabel } from './harness.js';

/**
 * A commit built with a patch applied (validate's expert side) through the same build and
 * verification as every environment: the tamper check allows exactly the patch, including the
 * files it adds and deletes, and nothing else.
 */
const label = testLabel('patched');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('patched');
const limits = { cpus: 1, memoryMb: 1024, pidsLimit: 256 };
const envs = testEnvironments(docker, limits);
let fixture: PythonRepo;
let spec: CommitBuildSpec;
let patch = '';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' },
  });

describe('a commit built with a patch (real Docker engine)', () => {
  beforeAll(async () => {
    await ensureAsvFakeImage();
    fixture = buildPythonRepo({ dir: join(dir, 'repo'), eras: [{ era: 'setup-py', commits: 1 }] });
    // The patch: git's own diff of a change that modifies, adds and deletes files.
    const work = join(dir, 'work');
    git(dir, 'clone', '-q', fixture.path, work);
    execFileSync(
      'bash',
      [
        '-c',
        'sed -i "s/^REVISION = .*/REVISION = 99/" fixpkg/core.py && printf "def helper():\\n    return 42\\n" > fixpkg/added.py && git rm -q tests/test_core.py && git add -A',
      ],
      { cwd: work },
    );
    patch = git(work, 'diff', '--cached', 'HEAD');
    expect(patch).toContain('new file mode');
    expect(patch).toContain('deleted file mode');
    const sourceImage = await envs.sourceFor(
      'fixture/patched',
      fixture.commits[0]!.sha,
      { kind: 'git', path: fixture.path },
      ASV_FAKE_IMAGE,
    );
    spec = {
      repo: 'fixture/patched',
      sha: fixture.commits[0]!.sha,
      script: correctScript('setup-py'),
      sourceImage,
      baseImage: ASV_FAKE_IMAGE,
      importName: 'fixpkg',
      asvConfigPath: 'asv.conf.json',
      pythonVersion: '3.11',
      patch,
    };
  }, 600_000);

  afterAll(async () => {
    await docker.removeLabelled(label);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('verifies the patched tree (added, modified and deleted files) and keeps HEAD at the commit', async () => {
    const tag = 'perfmine/expert-fixture-patched:1-attempt-1';
    const run = await envs.buildAndVerify(spec, tag);
    expect(run.failure).toBeNull();
    expect(run.steps.map((s) => `${s.step}:${s.ok}`)).toEqual([
      'script:true',
      'build:true',
      'history:true',
      'tamper:true',
      'import:true',
      'asv:true',
      'pytest:true',
      'scan:true',
    ]);
    const look = await docker.run({
      image: tag,
      cmd: [
        'bash',
        '-c',
        'git rev-parse HEAD; python3 -c "import fixpkg.core, fixpkg.added; print(fixpkg.core.REVISION, fixpkg.added.helper())"; ls tests; git hash-object fixpkg/added.py | git cat-file --batch-check',
      ],
      workingDir: '/repo',
      timeoutMs: 60_000,
      limits,
    });
    // the patch lives in the working tree only: the blob of the file it adds is not in the object store
    const blob = execFileSync('git', ['hash-object', '--stdin'], { input: 'def helper():\n    return 42\n', encoding: 'utf8' }).trim();
    expect(look.stdout.trim().split('\n')).toEqual([fixture.commits[0]!.sha, '99 42', `${blob} missing`]);
    const image = await docker.inspectImage(tag);
    expect(image?.labels).toMatchObject({ 'org.perfmine.tier': 'expert', 'org.perfmine.sha': fixture.commits[0]!.sha });
    expect(image?.labels['org.perfmine.patch-sha256']).toMatch(/^[0-9a-f]{64}$/);
  }, 300_000);

  it('says when the patch does not apply (the checkout step, with its own exit code)', async () => {
    const broken = patch.replace('-REVISION = 1', '-REVISION = 12345');
    const run = await envs.buildAndVerify({ ...spec, patch: broken }, 'perfmine/expert-fixture-patched:2-attempt-1');
    expect(run.image).toBeNull();
    expect(run.failure).toMatchObject({ step: 'checkout', kind: 'checkout-failed' });
    const checkout = run.steps.find((s) => s.step === 'checkout')!;
    expect(checkout.exitCode).toBe(PATCH_DOES_NOT_APPLY_EXIT);
    expect(checkout.stderr).toContain('the patch does not apply');
  }, 300_000);

  it('catches a build script that edits a file the patch added', async () => {
    const script = `${correctScript('setup-py')}echo "# touched by the build" >> fixpkg/added.py\n`;
    const run = await envs.buildAndVerify({ ...spec, script }, 'perfmine/expert-fixture-patched:3-attempt-1');
    expect(run.failure).toMatchObject({ step: 'tamper', kind: 'tampered' });
    expect(run.steps.find((s) => s.step === 'tamper')!.detail).toBe('the build script changed tracked files: fixpkg/added.py (other)');
  }, 300_000);
});
