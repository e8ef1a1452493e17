import { spawn, type ChildProcess } from 'node:child_process';
import { createLogger } from '../../pipeline/logging.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { validateConfig } from '../../stages/validate/config.js';
import { measureWithAsv } from '../../stages/validate/measure-asv.js';
import { measureWithHarness } from '../../stages/validate/measure-harness.js';
import type { InvocationRecord, Measured } from '../../stages/validate/measured.js';
import { ensureAsvFakeImage } from '../fakes/asv-image.js';
import { POWER_UNTOUCHED, POWER_SPEEDUPS, powerFiles } from '../validate/harness-docker/power-suite.js';
import { dockerWorkers, environmentOf, suiteImage } from '../validate/harness-docker/suite-image.js';

/**
 * Benchmark 6 (`npm run bench -- measure`): the two measurement engines on one candidate, the
 * power suite (8 workloads; the expert makes four of them exactly 1.1x, 1.2x, 1.5x and 2x
 * faster), the same images for both, with a CPU hog on every core the whole time: perfmine's
 * interleaved harness with its default protocol (adaptive: interim looks after rounds 6, 10 and
 * 15), the same harness with the protocol before issue 37 (sides taking turns by whole batches, the calibration and every sample in every round,
 * every workload every round, a 4-hour budget), the same harness with the fixed protocol (all 20 rounds for every workload), and the asv
 * engine's protocol (4 base/expert
 * and 3 base/base invocation pairs, asv `-a rounds=2`, each invocation a fresh container; the
 * stand-in asv, PyPI being unreachable here). Per engine: wall time, the minimum detectable
 * speedup over the workloads, what was found, what untouched was flagged.
 */

export interface EngineFigures {
  readonly seconds: number;
  readonly mds: { readonly median: number; readonly min: number; readonly max: number };
  /** Speedup -> found (improved). */
  readonly found: Readonly<Record<string, boolean>>;
  readonly untouchedFlagged: number;
  /** Each workload's verdict (improved, worsened, unchanged, ...), by name. */
  readonly changes: Readonly<Record<string, string>>;
  /** Sample batches run (harness engines only). */
  readonly batches: number | null;
}

export interface MeasureEnginesResult {
  readonly workloads: number;
  readonly hogs: number;
  readonly harness: EngineFigures;
  /** The harness with the protocol before issue 37 (interleave batch, plan even, calibration every round, samples fixed, a 4-hour budget), in the same run. */
  readonly before: EngineFigures;
  /** The harness with adaptive sampling off. */
  readonly fixed: EngineFigures;
  readonly asv: EngineFigures;
}

function figures(m: Measured, seconds: number): EngineFigures {
  const v = m.verdicts;
  if (!v) throw new Error(`no verdicts: ${JSON.stringify(m.evidence)}`);
  const byName = new Map(v.workloads.map((w) => [w.name.replace('bench.time_', ''), w.paired]));
  const mds = v.workloads.map((w) => w.paired.mds).filter((x): x is number => x !== null).sort((a, b) => a - b);
  return {
    seconds,
    mds: { median: mds[mds.length >> 1]!, min: mds[0]!, max: mds.at(-1)! },
    found: Object.fromEntries(Object.entries(POWER_SPEEDUPS).map(([name, s]) => [String(s), byName.get(name)?.change === 'improved'])),
    untouchedFlagged: POWER_UNTOUCHED.filter((u) => ['improved', 'worsened'].includes(byName.get(u)?.change ?? '')).length,
    changes: Object.fromEntries([...byName].map(([name, p]) => [name, p.change])),
    batches: m.harness?.batches ?? null,
  };
}

export async function measureEnginesBenchmark(): Promise<MeasureEnginesResult> {
  const label = `bench-measure-${process.pid}`;
  const docker = new DockerService({ runLabel: label });
  const log = createLogger({ level: 'warn', format: 'json' });
  const from = await ensureAsvFakeImage();
  const images = {
    base: await suiteImage(docker, `perfmine/bench-measure-base:${label}`, powerFiles(false), { from, git: true }),
    expert: await suiteImage(docker, `perfmine/bench-measure-expert:${label}`, powerFiles(true), { from, git: true }),
  };
  const hogs: ChildProcess[] = [0, 1].map(() => spawn('python3', ['-c', 'while True: pass'], { stdio: 'ignore' }));
  try {
    const { runner } = dockerWorkers(docker, log, images);
    const env = environmentOf('bench/power#1', images.base);
    const harnessConfig = validateConfig.parse({});
    let started = Date.now();
    const harness = await measureWithHarness(env, 'asv.conf.json', images.expert, { runner, config: harnessConfig, log });
    const harnessSeconds = (Date.now() - started) / 1000;

    // the protocol before issue 37: whole batches a side at a time, every workload and side every
    // round, the protocol's samples every round, 4 h
    started = Date.now();
    const beforeConfig = validateConfig.parse({
      harness: { interleave: 'batch', plan: 'even', calibrationRounds: null, samplesPerRound: 'fixed' },
      timeBudgetSeconds: 4 * 3600,
    });
    const before = await measureWithHarness(env, 'asv.conf.json', images.expert, { runner, config: beforeConfig, log });
    const beforeSeconds = (Date.now() - started) / 1000;

    started = Date.now();
    const fixed = await measureWithHarness(env, 'asv.conf.json', images.expert, { runner, config: validateConfig.parse({ harness: { adaptive: { looks: [] } } }), log });
    const fixedSeconds = (Date.now() - started) / 1000;

    const asvConfig = validateConfig.parse({ engine: 'asv' });
    const invocations: InvocationRecord[] = [];
    started = Date.now();
    const asv = await measureWithAsv(
      { key: 'bench/power#1', patch: '', environment: env, layout: { repoDir: '/repo', configPath: 'asv.conf.json', resultsDir: 'results' } },
      images.expert,
      invocations,
      { runner, config: asvConfig, log },
    );
    const asvSeconds = (Date.now() - started) / 1000;
    return {
      workloads: 8,
      hogs: hogs.length,
      harness: figures(harness, harnessSeconds),
      before: figures(before, beforeSeconds),
      fixed: figures(fixed, fixedSeconds),
      asv: figures(asv, asvSeconds),
    };
  } finally {
    for (const h of hogs) h.kill('SIGKILL');
    await docker.removeLabelled(label);
  }
}
