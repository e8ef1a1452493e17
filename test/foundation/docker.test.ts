import { describe, expect, it } from 'vitest';
import { DockerService, PERFMINE_LABEL } from '../../pipeline/services/docker.js';

const BASE = process.env.PERFMINE_TEST_BASE_IMAGE ?? 'perfmine/base:bookworm';
const limits = { cpus: 1, memoryMb: 512, pidsLimit: 128 };

describe('Docker engine through dockerode (real engine, local base image)', () => {
  const runLabel = `test-foundation-${process.pid}`;
  const docker = new DockerService({ runLabel });

  it('starts a container from the base image and reads its output', async () => {
    expect(await docker.imageExists(BASE)).toBe(true);
    const result = await docker.run({
      image: BASE,
      cmd: ['python3', '-c', 'import sys, pytest; print("python", sys.version_info[:2], "pytest", pytest.__version__); print("to stderr", file=sys.stderr)'],
      timeoutMs: 60_000,
      limits,
    });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(result.stdout).toMatch(/^python \(3, 11\) pytest \d+\.\d+/);
    expect(result.stderr).toBe('to stderr\n');
  });

  it('has no network and runs unprivileged with limits', async () => {
    const result = await docker.run({
      image: BASE,
      cmd: ['sh', '-c', 'cat /sys/class/net/*/operstate 2>/dev/null | sort -u; ls /sys/class/net; cat /proc/self/status | grep -E "^CapEff"'],
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
