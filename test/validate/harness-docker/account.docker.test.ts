import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSampleRepo } from '../../../pipeline/demo/sample-repo.js';
import { ACCOUNT_SIDES, formatAccount, sideTotalMs } from '../../../pipeline/concepts/measurement-account.js';
import { DockerService } from '../../../pipeline/services/docker.js';
import { accountSumMs } from '../../../stages/validate/harness/account.js';
import { measureInterleaved, type InterleavedMeasurement, type InterleaveSettings } from '../../../stages/validate/harness/interleave.js';
import { measurementSlot } from '../../helpers/measure-slot.js';
import { memoryLogger, tempDir, testLabel } from '../../synthesize/harness.js';
import { dockerWorkers, suiteImage } from './suite-image.js';

/**
 * The account of a real measurement (issue 37): the demo's sample repository (fastmath, its six
 * workloads) with one benchmark file added, in which two workloads run the same code and one of
 * them has a `setup` that burns 50 ms of CPU (asv runs it before every sample), measured by
 * validate's Docker runner and driver as validate measures (three workers, alternating, a fresh
 * process per round). Every part of the account is non-negative, they sum to the measured wall
 * time (which the driver's own clock agrees with), the driver's unaccounted time is small, and the
 * slow setup shows as setup, on every side.
 */
measurementSlot('shared');
const label = testLabel('harness-account');
const docker = new DockerService({ runLabel: label });
const { log } = memoryLogger();
const dir = tempDir('harness-account');

const SETUPS = `import time

import fastmath


def burn(seconds):
    # the CPU kept busy (a benchmark's setup as slow as a real one that builds its data)
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


class TimeSlowSetup:
    def setup(self):
        burn(0.05)

    def time_fib(self):
        return fastmath.fib(15)


class TimeQuickSetup:
    def setup(self):
        pass

    def time_fib(self):
        return fastmath.fib(15)
`;

const ROUNDS = 3;
const SAMPLES = 5;
const settings: InterleaveSettings = {
  rounds: ROUNDS,
  roundsPerProcess: 1,
  samples: SAMPLES,
  clock: 'cpu',
  mode: 'alternate',
  calibration: true,
  seed: 11,
  budgetMs: 1_200_000,
  batchTimeoutSeconds: null,
  warmupSeconds: 0.02,
};

let m: InterleavedMeasurement;
let outsideMs: number;
let image = '';

beforeAll(async () => {
  const sample = createSampleRepo(join(dir, 'sample'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: sample.path, encoding: 'utf8' });
  // the sample's suite and package as its default branch has them (pure Python: importable from /repo)
  const files: Record<string, string> = {};
  for (const path of git('ls-files', 'fastmath', 'benchmarks', 'asv.conf.json').split('\n').filter(Boolean))
    files[path] = readFileSync(join(sample.path, path), 'utf8');
  files['benchmarks/bench_setups.py'] = SETUPS;
  image = await suiteImage(docker, `perfmine/test-harness-account:${label}`, files);
  const { workers } = dockerWorkers(docker, log, { base: image, expert: image });
  const from = performance.now();
  m = await measureInterleaved(workers, settings);
  outsideMs = performance.now() - from;
}, 900_000);

afterAll(async () => {
  await docker.removeLabelled(label);
}, 120_000);

describe('the account of a real harness measurement of the demo sample', () => {
  it('measures every workload of the suite, on every side', () => {
    expect(m.base.event).toBe('ready');
    expect(m.rounds).toBe(ROUNDS);
    expect(m.workloads.map((w) => w.ref.name)).toEqual(
      expect.arrayContaining(['bench_core.time_fib', 'bench_setups.TimeSlowSetup.time_fib', 'bench_setups.TimeQuickSetup.time_fib']),
    );
    for (const w of m.workloads) for (const side of [w.base, w.expert, w.calibration!]) expect(side.failure).toBeNull();
    console.log(formatAccount(m.account!).join('\n'));
  });

  it('has non-negative parts that sum to the measured wall time, the driver explaining little of it', () => {
    const a = m.account!;
    const parts = [
      a.wallMs,
      a.workers.ms,
      a.workers.importMs,
      a.selectionMs,
      a.sideBySideMs,
      a.driverMs,
      ...ACCOUNT_SIDES.flatMap((s) => Object.values(a.sides[s])),
      ...m.workloads.flatMap((w) => [w.base, w.expert, w.calibration!].flatMap((s) => Object.values(s.account!))),
    ];
    for (const x of parts) expect(x).toBeGreaterThanOrEqual(0);
    expect(Math.abs(accountSumMs(a) - a.wallMs)).toBeLessThan(1);
    // the account's wall time is the measurement's, on the driver's other clock too (closing the workers comes after it)
    expect(Math.abs(a.wallMs - m.durationMs)).toBeLessThan(100);
    expect(a.wallMs).toBeLessThanOrEqual(outsideMs);
    // what the driver did not time apart is a small remainder, not a plug
    expect(a.driverMs).toBeLessThan(0.05 * a.wallMs);
    // every batch ran and was accounted; the processes: three opened, three fresh ones per later round
    expect(ACCOUNT_SIDES.map((s) => a.sides[s].batches)).toEqual(ACCOUNT_SIDES.map(() => m.workloads.length * (1 + ROUNDS)));
    expect(a.workers.starts).toBe(3 + 3 * (ROUNDS - 1));
    expect(a.workers.importMs).toBeGreaterThan(0);
    expect(a.workers.importMs).toBeLessThan(a.workers.ms);
    for (const s of ACCOUNT_SIDES) {
      expect(a.sides[s].samplesMs).toBeGreaterThan(0);
      expect(a.sides[s].warmupMs).toBeGreaterThan(0);
      expect(a.sides[s].failedMs).toBe(0);
    }
    // per workload and side, the harness's parts fit in the driver's batches: overhead is left in each
    for (const w of m.workloads)
      for (const s of [w.base, w.expert, w.calibration!]) {
        expect(s.account!.overheadMs).toBeGreaterThan(0);
        expect(sideTotalMs(s.account!)).toBeGreaterThan(s.account!.overheadMs);
      }
  });

  it('shows the slow setup as setup, on every side: asv runs it before every sample', () => {
    const slow = m.workloads.find((w) => w.ref.name === 'bench_setups.TimeSlowSetup.time_fib')!;
    const quick = m.workloads.find((w) => w.ref.name === 'bench_setups.TimeQuickSetup.time_fib')!;
    for (const side of ['base', 'expert', 'calibration'] as const) {
      const s = slow[side]!.account!;
      const q = quick[side]!.account!;
      // at least one setup per sample of every round (50 ms of CPU each; the container's one core may be shared)
      expect(s.setupMs).toBeGreaterThan(ROUNDS * SAMPLES * 50 * 0.9);
      expect(s.setupMs).toBeGreaterThan(q.setupMs + ROUNDS * SAMPLES * 50 * 0.8);
      // the same code timed: the samples' time is of the same order
      expect(s.samplesMs).toBeLessThan(3 * q.samplesMs + 50);
    }
    // among the heaviest workloads, where most of its time is its setup (no other workload's setup is)
    const heavy = m.account!.heaviest.find((w) => w.workload === 'bench_setups.TimeSlowSetup.time_fib')!;
    expect(heavy.setupMs).toBeGreaterThan(heavy.warmupMs + heavy.samplesMs + heavy.overheadMs);
    expect(m.account!.heaviest.filter((w) => w.setupMs > w.samplesMs).map((w) => w.workload)).toEqual([heavy.workload]);
  });

  it("takes fewer samples a round of the slow setup's workload sample by sample (samplesPerRound by-setup), asv's setup still before each", async () => {
    const { workers } = dockerWorkers(docker, log, { base: image, expert: image });
    const rounds = 3;
    const bySetup = await measureInterleaved(workers, {
      ...settings,
      rounds,
      interleave: 'sample',
      samplesPerRound: 'by-setup',
      seed: 12,
    });
    const of = (name: string) => bySetup.workloads.find((w) => w.ref.name === name)!;
    const slow = of('bench_setups.TimeSlowSetup.time_fib');
    const quick = of('bench_setups.TimeQuickSetup.time_fib');
    // fib(15) at asv's number takes about a sample_time (10 ms) against a 50 ms setup: ceil(5 x 10/60) = 1 or 2
    expect(slow.samples).toBeLessThanOrEqual(2);
    expect(quick.samples).toBe(SAMPLES);
    for (const side of [slow.base, slow.expert, slow.calibration!]) {
      expect(side.failure).toBeNull();
      expect(side.rounds.map((r) => r?.length)).toEqual([SAMPLES, ...Array<number>(rounds - 1).fill(slow.samples!)]);
      // one setup a sample still: at least 50 ms of setup for each of them
      expect(side.account!.setupMs).toBeGreaterThan((SAMPLES + (rounds - 1) * slow.samples! + 1) * 50 * 0.9);
    }
    for (const side of [quick.base, quick.expert]) expect(side.rounds.every((r) => r?.length === SAMPLES)).toBe(true);
  }, 600_000);
});
