import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { DockerService } from '../../pipeline/services/docker.js';
import { HISTORY_CHECK_SCRIPT } from '../../pipeline/services/environments/seal.js';

const execFileP = promisify(execFile);

/**
 * What an agent given a task's environment could try, checked: the history holds the base commit
 * and its ancestors only (every ref, reflog and object), the merge commit and the blobs the expert
 * patch adds cannot be read, nothing is dated after the base, and perfmine's own history check
 * passes in the image.
 */

/** The blob ids an expert patch (git's `--full-index` diff) adds or changes to. */
export function patchBlobs(patch: string): string[] {
  return [...patch.matchAll(/^index [0-9a-f]+\.\.([0-9a-f]{40,64})/gm)].map((m) => m[1]!).filter((id) => !/^0+$/.test(id));
}

/** `docker build` of a task folder alone, its locked files from `indexUrl` (a loopback index: the build shares the host's network). */
export async function buildTaskFolder(folder: string, tag: string, indexUrl: string | null): Promise<void> {
  const args = ['build', '-q', '-t', tag, ...(indexUrl ? ['--network', 'host', '--build-arg', `PIP_INDEX_URL=${indexUrl}`] : []), folder];
  await execFileP('docker', args, { maxBuffer: 64 * 1024 * 1024 });
}

async function inImage(docker: DockerService, image: string, script: string, env: Record<string, string> = {}) {
  const r = await docker.run({
    image,
    cmd: ['bash', '-c', script],
    env,
    workingDir: '/repo',
    network: 'none',
    timeoutMs: 120_000,
    limits: { cpus: 1, memoryMb: 1024, pidsLimit: 256 },
    tailChars: 1_000_000,
  });
  return { code: r.exitCode, out: r.stdout.trim(), err: r.stderr.trim() };
}

export async function expectSealedImage(
  docker: DockerService,
  image: string,
  facts: { readonly hostClone: string; readonly base: string; readonly merge: string; readonly patch: string },
): Promise<void> {
  const { stdout } = await execFileP('git', ['-C', facts.hostClone, 'rev-list', facts.base]);
  const ancestry = stdout.trim().split('\n').sort();
  expect((await inImage(docker, image, 'git rev-list --all --reflog | sort')).out.split('\n'), image).toEqual(ancestry);
  for (const id of [facts.merge, ...patchBlobs(facts.patch)])
    expect((await inImage(docker, image, `git cat-file -e ${id}`)).code, `${image}: ${id}`).not.toBe(0);
  const { stdout: baseDate } = await execFileP('git', ['-C', facts.hostClone, 'show', '-s', '--format=%cI', facts.base]);
  const latest = (await inImage(docker, image, 'git log --all --format=%cI | sort | tail -n 1')).out;
  expect(Date.parse(latest), image).toBeLessThanOrEqual(Date.parse(baseDate.trim()));
  const check = await inImage(docker, image, HISTORY_CHECK_SCRIPT, { PERFMINE_SHA: facts.base });
  expect(check.code, `${image}: ${check.out}`).toBe(0);
}
