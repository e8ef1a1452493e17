import { afterAll, describe, expect, it } from 'vitest';
import { DockerService } from '../../pipeline/services/docker.js';
import { testLabel } from './harness.js';

const label = testLabel('isolation');
const docker = new DockerService({ runLabel: label });
const limits = { cpus: 0.5, memoryMb: 256, pidsLimit: 64 };

describe('containers are isolated (real Docker engine)', () => {
  afterAll(async () => {
    await docker.removeLabelled(label);
  }, 60_000);

  it('see no credential, no Docker socket, no network but loopback, no extra privilege, and run with the limits', async () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-test-never-in-a-container';
    try {
      const r = await docker.run({
        image: 'perfmine/base:bookworm',
        cmd: [
          'bash',
          '-c',
          [
            'env',
            'echo "socket: $(ls /var/run/docker.sock /run/docker.sock 2>/dev/null | wc -l)"',
            'echo "interfaces: $(ls /sys/class/net | tr "\\n" " ")"',
            'echo "nonewprivs: $(grep NoNewPrivs /proc/self/status | tr -s "\\t " " ")"',
            'echo "memory: $(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"',
            'echo "pids: $(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max)"',
          ].join('; '),
        ],
        env: { PERFMINE_SHA: 'abc' },
        timeoutMs: 60_000,
        limits,
      });
      expect(r.exitCode).toBe(0);
      expect(r.stdout).not.toContain('sk-test-never-in-a-container');
      expect(r.stdout).not.toMatch(/OPENAI|GITHUB_TOKEN|DOCKER_HOST/);
      expect(r.stdout).toContain('PERFMINE_SHA=abc');
      expect(r.stdout).toContain('socket: 0');
      expect(r.stdout).toMatch(/interfaces: lo $/m);
      expect(r.stdout).toMatch(/nonewprivs: NoNewPrivs: 1/);
      expect(r.stdout).toMatch(/memory: 268435456/);
      expect(r.stdout).toMatch(/pids: 64/);
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });

  it('refuses to pass a credential-like variable into a container', async () => {
    await expect(
      docker.run({ image: 'perfmine/base:bookworm', cmd: ['true'], env: { GITHUB_TOKEN: 'x' }, timeoutMs: 10_000, limits }),
    ).rejects.toMatchObject({
      reason: 'credential-in-container',
    });
  });

  it('leaves no perfmine container of this run behind', async () => {
    expect(await docker.containers(label)).toEqual([]);
  });
});
