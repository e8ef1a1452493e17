import { afterAll, describe, expect, it } from 'vitest';
import { DockerService } from '../../../pipeline/services/docker.js';
import { measureInterleaved, type InterleaveSettings } from '../../../stages/validate/harness/interleave.js';
import { memoryLogger, testLabel } from '../../synthesize/harness.js';
import { dockerWorkers, suiteImage } from './suite-image.js';

/**
 * The harness's bad inputs through validate's real Docker runner: three warm workers in three
 * containers, driven by the interleaving loop. A benchmark that hangs, segfaults, raises, returns
 * NaN, prints to stdout or changes the working directory is recorded with its reason and the
 * others are measured; a suite that does not import is named as such; nothing is left running.
 */
const label = testLabel('harness-bad');
const docker = new DockerService({ runLabel: label });
const { log } = memoryLogger();

const BAD = `import ctypes, os, time

def work(n):
    t = 0
    for i in range(n):
        t += i % 7
    return t

def time_ok():
    work(2000)

def time_hang():
    while True:
        time.sleep(0.01)

def time_segfault():
    ctypes.string_at(0)

def time_raises():
    1 / 0

def time_prints():
    print('{"id": 1, "ok": true, "noise": "a benchmark pretending to answer"}')
    work(2000)

def time_chdir():
    os.chdir('/')
    work(2000)

def track_nan():
    return float('nan')

track_nan.unit = 'things'
`;

const CONFIG = '{"version": 1, "benchmark_dir": "benchmarks"}';
const settings: InterleaveSettings = {
  rounds: 3,
  roundsPerProcess: 1,
  samples: 3,
  clock: 'wall',
  mode: 'alternate',
  calibration: true,
  seed: 5,
  budgetMs: 600_000,
  batchTimeoutSeconds: 3,
  warmupSeconds: 0.01,
};

afterAll(async () => {
  await docker.removeLabelled(label);
}, 120_000);

describe('harness workers in real containers, on bad benchmarks', () => {
  it('records a hang (killed at its time limit), a segfault, an exception and NaN with their reasons, and measures the rest', async () => {
    const image = await suiteImage(docker, `perfmine/test-harness-bad:${label}`, {
      'asv.conf.json': CONFIG,
      'benchmarks/__init__.py': '',
      'benchmarks/bench.py': BAD,
    });
    const { workers } = dockerWorkers(docker, log, { base: image, expert: image });
    const m = await measureInterleaved(workers, settings);
    expect(m.base.event).toBe('ready');
    const by = new Map(m.workloads.map((w) => [w.ref.name, w]));
    const status = (name: string) => by.get(`bench.${name}`)!.base.failure?.status ?? 'measured';
    expect(status('time_hang')).toBe('timeout');
    expect(status('time_segfault')).toBe('crashed');
    expect(by.get('bench.time_segfault')!.base.failure!.message).toMatch(/SIGSEGV/);
    expect(status('time_raises')).toBe('failed');
    expect(by.get('bench.time_raises')!.base.failure!.message).toContain('ZeroDivisionError');
    expect(status('track_nan')).toBe('not-a-number');
    // the others: every side, every round, despite the crashes and kills around them
    for (const name of ['time_ok', 'time_prints', 'time_chdir']) {
      const w = by.get(`bench.${name}`)!;
      for (const side of [w.base, w.expert, w.calibration!]) {
        expect(side.failure, name).toBeNull();
        expect(
          side.rounds.every((r) => r !== null && r.length === 3),
          name,
        ).toBe(true);
      }
    }
    expect(m.rounds).toBe(3);
    // nothing left: every container of the run is gone
    expect(await docker.containers(label)).toEqual([]);
  }, 300_000);

  it('names a suite that does not import, with the module and the error, and starts nothing else', async () => {
    const image = await suiteImage(docker, `perfmine/test-harness-noimport:${label}`, {
      'asv.conf.json': CONFIG,
      'benchmarks/__init__.py': '',
      'benchmarks/bench_io.py': 'import requests_that_are_not_installed\n\ndef time_get():\n    pass\n',
    });
    const { workers } = dockerWorkers(docker, log, { base: image, expert: image });
    const m = await measureInterleaved(workers, settings);
    expect(m.base).toMatchObject({ event: 'fatal', reason: 'suite-not-importable' });
    expect(m.base.event === 'fatal' && m.base.message).toMatch(/bench_io|requests_that_are_not_installed/);
    expect(m.expert).toBeNull();
    expect(m.workloads).toEqual([]);
    expect(await docker.containers(label)).toEqual([]);
  }, 300_000);
});
