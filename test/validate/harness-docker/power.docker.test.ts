import { spawn, type ChildProcess, execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerService } from '../../../pipeline/services/docker.js';
import { validateConfig } from '../../../stages/validate/config.js';
import { measureWithHarness } from '../../../stages/validate/measure-harness.js';
import type { Measured } from '../../../stages/validate/measured.js';
import { memoryLogger, tempDir, testLabel } from '../../synthesize/harness.js';
import { POWER_SPEEDUPS, POWER_SUITE, POWER_UNTOUCHED, powerLibrary } from './power-suite.js';
import { dockerWorkers, environmentOf, suiteImage } from './suite-image.js';
import { measurementSlot } from '../../helpers/measure-slot.js';

/**
 * Power and safety of the interleaved harness and its verdict, measured for real on this machine:
 * a generated repository whose pull request makes four workloads exactly 1.1x, 1.2x, 1.5x and 2x
 * faster by doing proportionally less of the same work (iterations of constant cost), four others untouched, measured through
 * validate's harness path (three warm workers in containers, a fresh process per round, the
 * default protocol), once as the machine is and once with a CPU hog on every core beside it.
 * Must show: found at 1.2x and above, no untouched workload flagged. The figures (effects, MDS,
 * wall time) are printed for the record.
 */
measurementSlot('exclusive');
const label = testLabel('harness-power');
const docker = new DockerService({ runLabel: label });
const { log } = memoryLogger();
const dir = tempDir('power');
const SPEEDUPS = POWER_SPEEDUPS;
const UNTOUCHED = POWER_UNTOUCHED;

const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], {
    cwd: join(dir, 'repo'),
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' },
  });

/** The tracked files of a commit, as the image of that commit holds them. */
function filesAt(sha: string): Record<string, string> {
  const names = git('ls-tree', '-r', '--name-only', sha).trim().split('\n');
  return Object.fromEntries(names.map((n) => [n, git('show', `${sha}:${n}`)]));
}

let images: { base: string; expert: string };

beforeAll(async () => {
  const repo = join(dir, 'repo');
  mkdirSync(join(repo, 'benchmarks'), { recursive: true });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'asv.conf.json'), '{"version": 1, "benchmark_dir": "benchmarks"}\n');
  writeFileSync(join(repo, 'benchmarks', '__init__.py'), '');
  writeFileSync(join(repo, 'benchmarks', 'bench.py'), POWER_SUITE);
  writeFileSync(join(repo, 'powerlib.py'), powerLibrary(false));
  git('add', '-A');
  git('commit', '-qm', 'powerlib with benchmarks');
  const base = git('rev-parse', 'HEAD').trim();
  git('checkout', '-qb', 'less-work');
  writeFileSync(join(repo, 'powerlib.py'), powerLibrary(true));
  git('commit', '-qam', 'do less of the same work in four jobs');
  git('checkout', '-q', 'main');
  git('merge', '-q', '--no-ff', 'less-work', '-m', 'Merge pull request #1 from less-work');
  const merge = git('rev-parse', 'HEAD').trim();
  images = {
    base: await suiteImage(docker, `perfmine/test-power-base:${label}`, filesAt(base)),
    expert: await suiteImage(docker, `perfmine/test-power-expert:${label}`, filesAt(merge)),
  };
}, 300_000);

afterAll(async () => {
  await docker.removeLabelled(label);
  rmSync(dir, { recursive: true, force: true });
}, 120_000);

async function measure(): Promise<{ measured: Measured; seconds: number }> {
  const { runner } = dockerWorkers(docker, log, images);
  const config = validateConfig.parse({ harness: { seed: 11 } });
  const started = Date.now();
  const measured = await measureWithHarness(environmentOf('fixture/power#1', images.base), 'asv.conf.json', images.expert, {
    runner,
    config,
    log,
  });
  return { measured, seconds: (Date.now() - started) / 1000 };
}

function report(title: string, m: { measured: Measured; seconds: number }): void {
  const v = m.measured.verdicts!;
  const rows = v.workloads.map(
    (w) =>
      `  ${w.name.padEnd(16)} ${w.paired.change.padEnd(10)} effect ${(1 / w.paired.normalizedMedian!).toFixed(3)}  MDS ${w.paired.mds?.toFixed(3)}  noise ${w.paired.noise?.toFixed(4)}  faster ${w.paired.fasterPairs}/${w.paired.usablePairs}`,
  );
  const mds = v.workloads.map((w) => w.paired.mds!).sort((x, y) => x - y);
  console.log(
    `${title}: ${m.seconds.toFixed(0)} s, ${v.paired.pairs} rounds; MDS median ${mds[mds.length >> 1]!.toFixed(3)} [${mds[0]!.toFixed(3)}, ${mds.at(-1)!.toFixed(3)}]; ` +
      `calibration false positives ${v.paired.calibration.falsePositives.flagged}/${v.paired.calibration.falsePositives.compared}, bias allowance ${Math.exp(v.paired.calibration.biasLog).toFixed(3)}\n${rows.join('\n')}`,
  );
}

function expectPowerAndSafety(m: { measured: Measured }): void {
  const v = m.measured.verdicts!;
  const change = new Map(v.workloads.map((w) => [w.name.replace('bench.time_', ''), w.paired.change]));
  for (const name of ['b', 'c', 'd']) expect(change.get(name), `${name} (${SPEEDUPS[name]}x)`).toBe('improved');
  for (const name of UNTOUCHED) expect(change.get(name), name).toBe('unchanged');
  // 1.1x is reported, not required
  expect(['improved', 'unchanged']).toContain(change.get('a'));
  expect(v.workloads.filter((w) => w.paired.change === 'worsened')).toEqual([]);
  // the effects measured are the work removed, within the noise
  for (const w of v.workloads.filter((x) => x.paired.change === 'improved')) {
    const s = SPEEDUPS[w.name.replace('bench.time_', '')]!;
    expect(1 / w.paired.normalizedMedian!).toBeGreaterThan(s / 1.1);
    expect(1 / w.paired.normalizedMedian!).toBeLessThan(s * 1.1);
  }
}

describe('power and safety of the interleaved harness (real containers, this machine)', () => {
  it('as the machine is: finds 1.2x, 1.5x and 2x, flags nothing untouched', async () => {
    const m = await measure();
    report('as the machine is', m);
    expectPowerAndSafety(m);
  }, 900_000);

  it('with a CPU hog on every core beside it: the same', async () => {
    const hogs: ChildProcess[] = [0, 1].map(() => spawn('python3', ['-c', 'while True: pass'], { stdio: 'ignore' }));
    try {
      const m = await measure();
      report('with a CPU hog on every core', m);
      expectPowerAndSafety(m);
    } finally {
      for (const h of hogs) h.kill('SIGKILL');
    }
  }, 900_000);
});
