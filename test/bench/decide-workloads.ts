/**
 * Benchmark (not a test): how long asv's decision takes for many workloads. Generates, with a
 * seeded PRNG, `workloads` workloads of `samples` raw samples per side (a fifth of them truly
 * faster or slower), then times what validate does per workload: asv's compute_stats on each
 * side and asv compare's verdict (Mann-Whitney U / CI check, factor, ~).
 *
 *   npx tsx test/bench/decide-workloads.ts [workloads] [samples]
 */
import { pathToFileURL } from 'node:url';
import { mulberry32 } from '../helpers/prng.js';
import { computeStats, decideWorkload, type Mark, type Measurement } from '../../pipeline/concepts/asv/index.js';

export interface DecideBenchmarkResult {
  readonly workloads: number;
  readonly samples: number;
  /** Wall time of the decisions, in milliseconds (generation excluded). */
  readonly ms: number;
  readonly marks: Readonly<Record<Mark, number>>;
}


function generate(workloads: number, samples: number, seed: number): { base: number[][]; head: number[][] } {
  const random = mulberry32(seed);
  const base: number[][] = [];
  const head: number[][] = [];
  for (let w = 0; w < workloads; w++) {
    const scale = 10 ** (-7 + random() * 6); // 100 ns .. 100 ms
    const roll = random();
    const effect = roll < 0.1 ? 0.5 + random() * 0.4 : roll < 0.2 ? 1.1 + random() * 0.6 : 1;
    const noise = 0.02 + random() * 0.2;
    const draw = (center: number) => Array.from({ length: samples }, () => center * (1 + noise * (random() + random() + random() - 1.5)));
    base.push(draw(scale));
    head.push(draw(scale * effect));
  }
  return { base, head };
}

function measure(samples: readonly number[]): Measurement {
  const computed = computeStats(samples, 1);
  if (computed === null) return { value: null, stats: null, samples: null, version: 'v' };
  return { value: computed.result, stats: computed.stats, samples, version: 'v' };
}

/** Decides `workloads` workloads of `samples` samples per side and times it. */
export function decideWorkloadsBenchmark(workloads = 5000, samples = 20, seed = 3): DecideBenchmarkResult {
  const { base, head } = generate(workloads, samples, seed);
  const marks: Record<Mark, number> = { '-': 0, '+': 0, ' ': 0, x: 0, '!': 0, '*': 0 };
  const start = performance.now();
  for (let w = 0; w < workloads; w++) {
    const verdict = decideWorkload(measure(base[w]!), measure(head[w]!));
    marks[verdict.mark]++;
  }
  const ms = performance.now() - start;
  return { workloads, samples, ms, marks };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const workloads = Number(process.argv[2] ?? 5000);
  const samples = Number(process.argv[3] ?? 20);
  const r = decideWorkloadsBenchmark(workloads, samples);
  console.log(`decided ${r.workloads} workloads x ${r.samples} samples per side in ${r.ms.toFixed(1)} ms (compute_stats + verdict)`);
  console.log(`marks: ${Object.entries(r.marks).map(([m, n]) => `'${m}' ${n}`).join(', ')}`);
}
