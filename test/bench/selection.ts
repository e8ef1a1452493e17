import { createLogger } from '../../pipeline/logging.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { validateConfig } from '../../stages/validate/config.js';
import { measureWithHarness } from '../../stages/validate/measure-harness.js';
import { bigSuiteFiles, twoFunctionsPatch } from '../validate/selection/big-suite.js';
import { dockerWorkers, environmentOf, suiteImage } from '../validate/harness-docker/suite-image.js';

/**
 * Benchmark 7 (`npm run bench -- selection`): the cost of measuring only the workloads a patch can
 * affect. The generated suite of 500 workloads across 50 modules, a patch that makes two of its
 * functions do less; the same images and the default protocol, measured twice: with selection by
 * coverage (fingerprints of all 500 at the base, then the selected workloads and 5 controls), and
 * every workload. `BENCH_SELECTION_ROUNDS` (default: the protocol's 20) runs both arms with fewer
 * rounds and no interim looks: measuring all 500 (1,500 batches a round) with the default protocol
 * did not finish within 16 minutes here, and fewer rounds only raise the ratio (the fingerprinting pass of the selected arm is a fixed cost).
 */
export interface SelectionBenchmarkResult {
  readonly workloads: number;
  /** Rounds of the protocol (null: the default, with adaptive looks). */
  readonly rounds: number | null;
  readonly selected: { readonly seconds: number; readonly measured: number; readonly found: readonly string[]; readonly expected: readonly string[] };
  readonly all: { readonly seconds: number; readonly measured: number; readonly found: readonly string[] };
  readonly ratio: number;
}

export async function selectionBenchmark(): Promise<SelectionBenchmarkResult> {
  const label = `bench-selection-${process.pid}`;
  const docker = new DockerService({ runLabel: label });
  const log = createLogger({ level: 'warn', format: 'json' });
  const patch = twoFunctionsPatch();
  try {
    const images = {
      base: await suiteImage(docker, `perfmine/bench-selection-base:${label}`, bigSuiteFiles()),
      expert: await suiteImage(docker, `perfmine/bench-selection-expert:${label}`, patch.files),
    };
    const { runner } = dockerWorkers(docker, log, images);
    const env = { ...environmentOf('bench/big#1', images.base), synthesized: { repo: 'bench/big', sha: 'a'.repeat(40), commitDate: '2025-04-01T00:00:00Z' } as never };
    const rounds = process.env.BENCH_SELECTION_ROUNDS ? Number(process.env.BENCH_SELECTION_ROUNDS) : null;
    const config = validateConfig.parse({ harness: { seed: 3, ...(rounds ? { rounds, adaptive: { looks: [] } } : {}) } });
    const run = async (withSelection: boolean) => {
      const started = Date.now();
      const m = await measureWithHarness(env, 'asv.conf.json', images.expert, { runner, config, log }, withSelection ? { patch: patch.diff, benchmarkDir: 'benchmarks' } : undefined);
      const improved = (m.verdicts?.workloads ?? []).filter((w) => w.paired.change === 'improved').map((w) => w.name).sort();
      return { seconds: (Date.now() - started) / 1000, measured: m.verdicts?.workloads.length ?? 0, found: improved };
    };
    const selected = await run(true);
    const all = await run(false);
    return { workloads: 500, rounds, selected: { ...selected, expected: patch.expected }, all, ratio: selected.seconds / all.seconds };
  } finally {
    await docker.removeLabelled(label);
  }
}
