import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerService, IMAGE_OWNER_LABEL, PERFMINE_LABEL, imageBuilderDone } from '../../pipeline/services/docker.js';
import { currentOwner, formatOwner, startTimeOf } from '../../pipeline/services/owner.js';
import { ASV_FAKE_IMAGE, ensureAsvFakeImage } from '../fakes/asv-image.js';
import { newGitRepo, tempDir, testEnvironments, testLabel } from './harness.js';

/**
 * Two perfmine processes on one repository at once (a cron run and a rerun of one stage, or two
 * test files on one engine): each builds the repository tier of its own clone and untags the
 * older ones. The one it untags must not be another live process's clone, which that process is
 * about to seal a commit from by its tag (a CI run lost two suites so: the engine then tried to
 * pull the missing tag from Docker Hub). A clone that went away all the same is built again once.
 */
const label = testLabel('shared-clone');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('shared-clone');
const repo = join(dir, 'repo');
const REPO = 'fixture/shared-clone';
const limits = { cpus: 1, memoryMb: 512, pidsLimit: 128 };
let git: (...args: string[]) => string;
let alive: ChildProcess | undefined;

function commit(n: number): string {
  writeFileSync(join(repo, 'lib.py'), `X = ${n}\n`);
  git('add', 'lib.py');
  git('commit', '-q', '-m', `commit ${n}`);
  return git('rev-parse', 'HEAD');
}

/** A repository-tier tag of REPO whose image says `builder` built it (as another process's build would). */
function foreignClone(tag: string, builder: string): void {
  execFileSync(
    'docker',
    ['build', '-q', '-t', tag, '--label', `${PERFMINE_LABEL}=${label}`, '--label', `${IMAGE_OWNER_LABEL}=${builder}`, '-'],
    {
      input: `FROM ${ASV_FAKE_IMAGE}\nRUN echo ${tag} > /clone-of\n`,
    },
  );
}

const tags = async () =>
  (await docker.images(label)).flatMap((i) => i.RepoTags ?? []).filter((t) => t.startsWith('perfmine/repo-fixture-shared-clone:'));

describe('a repository shared by two live processes (real Docker engine)', () => {
  beforeAll(async () => {
    await ensureAsvFakeImage();
    git = newGitRepo(repo);
    commit(1);
  }, 300_000);

  afterAll(async () => {
    alive?.kill();
    await docker.removeLabelled(label);
    rmSync(dir, { recursive: true, force: true });
  });

  it('decides whose superseded image may go: unrecorded, this process, or a builder provably gone', () => {
    const mine = formatOwner(currentOwner());
    const gone = (owner: string) => owner.endsWith(':gone');
    expect(imageBuilderDone(undefined, mine, gone)).toBe(true);
    expect(imageBuilderDone('', mine, gone)).toBe(true);
    expect(imageBuilderDone(mine, mine, gone)).toBe(true);
    expect(imageBuilderDone('h/ns:1:gone', mine, gone)).toBe(true);
    expect(imageBuilderDone('h/ns:1:42', mine, gone)).toBe(false);
  });

  it("untags this process's older clone and a gone builder's, and leaves a live process's", async () => {
    const envs = testEnvironments(docker, limits);
    const first = await envs.ensureRepoImage(REPO, { kind: 'git', path: repo }, ASV_FAKE_IMAGE);

    alive = spawn('sleep', ['600'], { stdio: 'ignore' });
    // owners as another process of this host and PID namespace records itself
    const ownerOf = (pid: number) => formatOwner({ ...currentOwner(), pid, startTime: startTimeOf(pid)! });
    const liveOwner = ownerOf(alive.pid!);
    const ended = spawn('sleep', ['600'], { stdio: 'ignore' });
    const goneOwner = ownerOf(ended.pid!);
    ended.kill();
    await once(ended, 'exit');
    foreignClone('perfmine/repo-fixture-shared-clone:live0000000000000', liveOwner);
    foreignClone('perfmine/repo-fixture-shared-clone:gone0000000000000', goneOwner);

    commit(2);
    const second = await envs.ensureRepoImage(REPO, { kind: 'git', path: repo }, ASV_FAKE_IMAGE);
    expect(second).not.toBe(first);
    expect((await tags()).sort()).toEqual([second, 'perfmine/repo-fixture-shared-clone:live0000000000000'].sort());

    // once that process has ended, the next clone untags its image too
    alive.kill();
    await once(alive, 'exit');
    commit(3);
    const third = await envs.ensureRepoImage(REPO, { kind: 'git', path: repo }, ASV_FAKE_IMAGE);
    expect(await tags()).toEqual([third]);
  }, 300_000);

  it('builds the clone again when it goes away between its check and the seal', async () => {
    const envs = testEnvironments(docker, limits);
    const sha = commit(4);
    const clone = { kind: 'git', path: repo } as const;
    let calls = 0;
    // the clone as the process checked it, then removed (as another process's clean-up would) before its use
    const repoImage = async () => {
      const tag = await envs.ensureRepoImage(REPO, clone, ASV_FAKE_IMAGE);
      if (++calls === 1) await docker.removeImage(tag);
      return tag;
    };
    const source = await envs.ensureSourceImage(REPO, sha, ASV_FAKE_IMAGE, repoImage, clone);
    expect(calls).toBe(2);
    const sealed = await docker.run({
      image: source,
      cmd: ['git', '-C', '/repo', 'rev-parse', 'HEAD'],
      network: 'none',
      timeoutMs: 60_000,
      limits,
    });
    expect(sealed.stdout.trim()).toBe(sha);
  }, 300_000);
});
