import { getEventListeners } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILD_LABEL, DockerService, labelledDockerfile, PERFMINE_LABEL } from '../../pipeline/services/docker.js';

const BASE = process.env.PERFMINE_TEST_BASE_IMAGE ?? 'perfmine/base:bookworm';
const limits = { cpus: 1, memoryMb: 512, pidsLimit: 128 };

describe('Docker engine through dockerode (real engine, local base image)', () => {
  const runLabel = `test-foundation-${process.pid}`;
  const docker = new DockerService({ runLabel });
  afterAll(async () => {
    await docker.removeLabelled(runLabel);
  }, 60_000);

  it('builds an image from a generated context, every layer labelled; a failed build leaves no dangling layer', async () => {
    const ok = await docker.buildImage({
      tag: `perfmine-test/foundation:${process.pid}`,
      context: [
        { name: 'Dockerfile', content: `FROM ${BASE}\nCOPY hello.txt /hello.txt\nRUN cat /hello.txt > /copy.txt\n` },
        { name: 'hello.txt', content: 'hello\n' },
      ],
      timeoutMs: 120_000,
    });
    expect(ok).toMatchObject({ ok: true, timedOut: false, error: null });
    const image = await docker.inspectImage(`perfmine-test/foundation:${process.pid}`);
    expect(image?.labels).toMatchObject({
      [PERFMINE_LABEL]: runLabel,
      [BUILD_LABEL]: expect.stringMatching(new RegExp(`^${runLabel}-${process.pid}-\\d+$`)),
    });

    const failed = await docker.buildImage({
      tag: `perfmine-test/foundation-failed:${process.pid}`,
      context: [{ name: 'Dockerfile', content: `FROM ${BASE}\nRUN echo first > /first.txt\nRUN echo compiling && exit 3\n` }],
      timeoutMs: 120_000,
    });
    expect(failed).toMatchObject({ ok: false, imageId: null });
    expect(failed.log).toContain('compiling');
    // Every layer of this process's builds left in the engine belongs to the successful build.
    const okBuild = image!.labels[BUILD_LABEL]!;
    const layers = await docker.docker.listImages({ all: true, filters: { label: [BUILD_LABEL] } });
    const ours = layers.map((i) => i.Labels?.[BUILD_LABEL] ?? '').filter((id) => id.startsWith(`${runLabel}-`));
    expect(ours.length).toBeGreaterThan(0);
    expect(new Set(ours)).toEqual(new Set([okBuild]));
  });

  it('labels a Dockerfile right after its first FROM', () => {
    expect(labelledDockerfile('# c\nFROM a AS b\nRUN x\nFROM b\n', 'id-1')).toBe(
      `# c\nFROM a AS b\nLABEL ${BUILD_LABEL}=id-1\nRUN x\nFROM b\n`,
    );
    expect(labelledDockerfile('RUN x', 'id')).toBe('RUN x');
  });

  it('starts a container from the base image and reads its output', async () => {
    expect(await docker.imageExists(BASE)).toBe(true);
    const result = await docker.run({
      image: BASE,
      cmd: [
        'python3',
        '-c',
        'import sys, pytest; print("python", sys.version_info[:2], "pytest", pytest.__version__); print("to stderr", file=sys.stderr)',
      ],
      timeoutMs: 60_000,
      limits,
    });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(result.stdout).toMatch(/^python \(3, 11\) pytest \d+\.\d+/);
    expect(result.stderr).toBe('to stderr\n');
  });

  it("a session leaves no listener on the caller's signal once it has ended", async () => {
    const controller = new AbortController();
    for (let i = 0; i < 2; i++) {
      const session = await docker.session({ image: BASE, cmd: ['cat'], limits, maxLifetimeMs: 60_000 }, controller.signal);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
      await session.close();
      // the listener goes in a callback on `exited` attached before this await, so it has run
      await session.exited;
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    }
  });

  it('has no network and runs unprivileged with limits', async () => {
    const result = await docker.run({
      image: BASE,
      cmd: [
        'sh',
        '-c',
        'cat /sys/class/net/*/operstate 2>/dev/null | sort -u; ls /sys/class/net; cat /proc/self/status | grep -E "^CapEff"',
      ],
      timeoutMs: 60_000,
      limits,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n')).toContain('lo');
    expect(result.stdout).not.toMatch(/eth0/);
    expect(result.stdout).not.toMatch(/CapEff:\s+0000003fffffffff|CapEff:\s+000001ffffffffff/);
  });

  it('kills a container at its timeout and leaves nothing behind', async () => {
    const result = await docker.run({ image: BASE, cmd: ['sleep', '600'], timeoutMs: 1_500, limits });
    expect(result).toMatchObject({ exitCode: null, timedOut: true });
    const left = await docker.docker.listContainers({ all: true, filters: { label: [`${PERFMINE_LABEL}=${runLabel}`] } });
    expect(left).toEqual([]);
  });
});
