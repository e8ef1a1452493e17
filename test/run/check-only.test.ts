import { describe, expect, it } from 'vitest';
import { checkOnlyDocker, checkOnlyServices, WouldChange } from '../../pipeline/services/check-only.js';
import type { DockerService, RunSpec } from '../../pipeline/services/docker.js';
import type { Services } from '../../pipeline/services/index.js';

/** A Docker adapter that records every call it gets (no engine needed: the wrapper is what is tested). */
function recordingDocker() {
  const calls: string[] = [];
  const docker = {
    secret: 'private state',
    async ping() {
      calls.push('ping');
      return { version: '1', apiVersion: '1.41' };
    },
    async imageExists(tag: string) {
      calls.push(`imageExists ${tag}`);
      return true;
    },
    async run(spec: RunSpec) {
      calls.push(`run ${spec.image}`);
      return { exitCode: 0, stdout: 'asv 0.6', stderr: '' };
    },
    async buildImage() {
      calls.push('buildImage');
      return { ok: true };
    },
    async tagImage() {
      calls.push('tagImage');
    },
    async removeImage() {
      calls.push('removeImage');
    },
    async removeLeftovers() {
      calls.push('removeLeftovers');
      return { containers: ['c1'], images: ['i1'] };
    },
    async removeLabelled() {
      calls.push('removeLabelled');
      return { containers: 1, images: 1 };
    },
    whoAmI(this: { secret: string }) {
      return this.secret;
    },
  };
  return { docker: docker as unknown as DockerService & { whoAmI(): string }, calls };
}

describe('the check-only Docker adapter of a dry run', () => {
  it('answers what is there and runs probes on the real adapter', async () => {
    const { docker, calls } = recordingDocker();
    const checked = checkOnlyDocker(docker);
    await checked.ping();
    expect(await checked.imageExists('perfmine/base:bookworm')).toBe(true);
    expect((await checked.run({ image: 'perfmine/base:bookworm', cmd: ['asv', '--version'] } as unknown as RunSpec)).exitCode).toBe(0);
    // Methods run with the real adapter as `this` (its private fields live there).
    expect((checked as typeof docker).whoAmI()).toBe('private state');
    expect(calls).toEqual(['ping', 'imageExists perfmine/base:bookworm', 'run perfmine/base:bookworm']);
  });

  it('builds, tags and commits nothing (WouldChange says what a real run would do) and removes nothing', async () => {
    const { docker, calls } = recordingDocker();
    const checked = checkOnlyDocker(docker);
    await expect(checked.buildImage({ tag: 'perfmine/toolchain:abc' } as never)).rejects.toThrow(
      new WouldChange('build the image perfmine/toolchain:abc'),
    );
    await expect(checked.tagImage('a', 'b')).rejects.toBeInstanceOf(WouldChange);
    await expect(
      checked.run({ image: 'x', cmd: ['true'], commit: { repo: 'perfmine/env', tag: 't' } } as unknown as RunSpec),
    ).rejects.toThrow(/build the image perfmine\/env:t/);
    expect(await checked.removeLeftovers()).toEqual({ containers: [], images: [] });
    expect(await checked.removeLabelled('x')).toEqual({ containers: 0, images: 0 });
    await checked.removeImage('x');
    expect(calls).toEqual([]);
  });

  it('wraps only Docker: the other adapters are the same objects, created when first used', () => {
    const { docker } = recordingDocker();
    const made: string[] = [];
    const services = {
      get docker() {
        made.push('docker');
        return docker;
      },
      get llm(): never {
        throw new Error('no LLM under --llm none');
      },
      get git() {
        made.push('git');
        return 'git-adapter';
      },
    } as unknown as Services;
    const checked = checkOnlyServices(services);
    expect(made).toEqual([]);
    expect(checked.git).toBe('git-adapter');
    expect(() => checked.llm).toThrow(/no LLM/);
    expect(checked.docker).not.toBe(docker);
    expect(checked.docker).toBe(checked.docker);
    expect(made).toEqual(['git', 'docker']);
  });
});
