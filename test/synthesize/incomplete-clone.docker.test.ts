import { rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ItemError } from '../../pipeline/errors.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { ASV_FAKE_IMAGE, ensureAsvFakeImage } from '../fakes/asv-image.js';
import { newGitRepo, tempDir, testEnvironments, testLabel } from './harness.js';

/**
 * A clone that lacks a blob its history reaches (as a snapshot without its largest files: rich's
 * 2020 GIFs, pvlib's data files) cannot be bundled into the repository tier; the error says so,
 * names the object and how to list and fetch the others, instead of git's bare "unable to read".
 */
const label = testLabel('incomplete-clone');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('incomplete-clone');
const repo = join(dir, 'repo');

describe('a clone with a missing object (real git, real Docker engine)', () => {
  let missing: string;
  beforeAll(async () => {
    await ensureAsvFakeImage();
    const git = newGitRepo(repo);
    writeFileSync(join(repo, 'big.gif'), 'GIF89a, once large\n');
    git('add', 'big.gif');
    git('commit', '-q', '-m', 'add a large file');
    git('rm', '-q', 'big.gif');
    writeFileSync(join(repo, 'lib.py'), 'X = 1\n');
    git('add', 'lib.py');
    git('commit', '-q', '-m', 'drop it');
    missing = git('rev-parse', 'HEAD~1:big.gif');
    unlinkSync(join(repo, '.git', 'objects', missing.slice(0, 2), missing.slice(2)));
  }, 300_000);

  afterAll(async () => {
    await docker.removeLabelled(label);
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the missing object and the commands that list and fetch what is missing', async () => {
    const envs = testEnvironments(docker, { cpus: 1, memoryMb: 512, pidsLimit: 128 });
    const error = await envs.ensureRepoImage('fixture/incomplete', { kind: 'git', path: repo }, ASV_FAKE_IMAGE).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ItemError);
    expect((error as ItemError).reason).toBe('git-failed');
    expect((error as ItemError).message).toBe(
      `the clone at ${repo} lacks objects its history reaches (${missing}, and perhaps more): a partial clone or an incomplete snapshot cannot be bundled into the repository tier`,
    );
    expect((error as ItemError).fix).toBe(
      `list them with \`git -C ${repo} fsck --connectivity-only\`; fetch them (\`git -C ${repo} fetch --refetch origin\`) or use a complete clone`,
    );
  });
});
