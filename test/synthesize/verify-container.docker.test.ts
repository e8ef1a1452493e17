import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerService } from '../../pipeline/services/docker.js';
import { Environments } from '../../pipeline/services/environments/environment.js';
import { memoryLogger, testLabel } from './harness.js';

/**
 * Verification runs its four steps (tamper check, import, discovery, pytest collection) in one
 * container, each under its own time limit: on the real Docker engine, a package that imports
 * passes every step with each step's own output, and one whose import hangs is killed at the
 * import's limit (timed out, no exit code) while the tamper check before it keeps its result and
 * the steps after it do not run.
 */
const BASE_IMAGE = 'perfmine/base:bookworm';
const label = testLabel('verify-container');
const docker = new DockerService({ runLabel: label });
const limits = { cpus: 1, memoryMb: 1024, pidsLimit: 256 };
const IMPORT_LIMIT_MS = 3_000;
let image: string;
let sha: string;

/** A repository at /repo with two packages on the image's path: `quick` imports, `stuck` never finishes importing. */
const SETUP = `set -euo pipefail
mkdir -p /repo/quick /repo/stuck /repo/benchmarks
cd /repo
echo 'VALUE = 1' > quick/__init__.py
printf 'import time\\nprint("stuck: importing", flush=True)\\ntime.sleep(600)\\n' > stuck/__init__.py
echo '{"version": 1, "project": "quick", "benchmark_dir": "benchmarks"}' > asv.conf.json
printf 'def time_value():\\n    import quick\\n    return quick.VALUE\\n' > benchmarks/bench_quick.py
touch benchmarks/__init__.py
git init -q -b main && git add -A && git -c user.name=t -c user.email=t@example.invalid commit -q -m init
echo /repo > "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/repo.pth"
git rev-parse HEAD
`;

function environments(): Environments {
  return new Environments(
    docker,
    {
      limits,
      timeoutsMs: { repoImage: 60_000, build: 60_000, import: IMPORT_LIMIT_MS, asv: 60_000, pytest: 60_000, tamper: 60_000, tool: 60_000 },
      tailChars: 8000,
      buildNetwork: 'none',
      index: null,
      store: null,
      asvDiscover: 'harness',
    },
    memoryLogger().log,
  );
}

const spec = (importName: string) => ({
  repo: 'fixture/verify',
  sha,
  importName,
  asvConfigPath: 'asv.conf.json',
  pythonVersion: null,
});

beforeAll(async () => {
  const tag = `${process.pid}`;
  const made = await docker.run({
    image: BASE_IMAGE,
    cmd: ['bash', '-c', SETUP],
    timeoutMs: 120_000,
    limits,
    commit: { repo: 'perfmine-test/verify-container', tag },
  });
  expect(made.exitCode, made.stderr).toBe(0);
  sha = made.stdout.trim().split('\n').at(-1)!;
  image = `perfmine-test/verify-container:${tag}`;
}, 180_000);

afterAll(async () => {
  await docker.removeLabelled(label);
  await docker.removeImage(image).catch(() => undefined);
}, 120_000);

describe('verification in one container (real Docker engine)', () => {
  it('passes every step of a package that imports, each with its own output', async () => {
    const steps = await environments().verify(image, spec('quick'));
    expect(steps.map((s) => [s.step, s.ok, s.exitCode, s.timedOut])).toEqual([
      ['history', true, 0, false],
      ['tamper', true, 0, false],
      ['import', true, 0, false],
      ['asv', true, 0, false],
      // no tests: pytest's exit code 5, which counts as collected
      ['pytest', true, 5, false],
    ]);
    const [history, tamper, imported, discovered] = steps;
    expect(history!.stdout).toContain('history sealed at');
    expect(tamper!.stdout).toContain('tracked files as expected');
    expect(imported!.stdout).toMatch(/^imported quick from \/repo\/quick\/__init__\.py$/m);
    expect(imported!.stdout).not.toContain('tracked files');
    expect(discovered!.stdout).toContain('perfmine harness: 1 benchmarks discovered');
    for (const s of steps) expect(s.durationMs).toBeGreaterThanOrEqual(0);
  }, 120_000);

  it("kills an import that never ends at the import's limit; the tamper check keeps its result, the later steps do not run", async () => {
    const steps = await environments().verify(image, spec('stuck'));
    expect(steps.map((s) => [s.step, s.ok, s.exitCode, s.timedOut])).toEqual([
      ['history', true, 0, false],
      ['tamper', true, 0, false],
      ['import', false, null, true],
    ]);
    expect(steps[2]!.stdout).toContain('stuck: importing');
    expect(steps[2]!.durationMs).toBeGreaterThanOrEqual(IMPORT_LIMIT_MS);
    // killed at its own limit, not the other steps' 60 s nor the 600 s sleep (20 s of slack: a loaded machine starts processes slowly)
    expect(steps[2]!.durationMs).toBeLessThan(IMPORT_LIMIT_MS + 20_000);
  }, 120_000);
});
