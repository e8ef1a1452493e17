import type { InterleavedMeasurement, SideRecord, WorkloadRecord } from '../../stages/validate/harness/interleave.js';
import type { ReadyMessage } from '../../stages/validate/harness/messages.js';
import type { PairedOptions, SequentialOptions } from '../../stages/validate/paired/index.js';
import { DEFAULT_PAIRED_OPTIONS } from '../../stages/validate/paired/index.js';
import { mulberry32 } from '../helpers/prng.js';

/**
 * Seeded interleaved measurements for the cross-language check of the verdict: the rounds of base,
 * working tree and calibration batches of a handful of workloads, with clear improvements, clear
 * regressions, noise only, mixed directions, effects below the floor, too few rounds, failures on
 * either side (in the warm-up or part-way), benchmarks whose version changed, and grouped rounds.
 * Each case is plain JSON, read the same way by the TypeScript verdict and by perfmine-bench's port.
 */

export type CaseKind = 'improve' | 'regress' | 'noise' | 'few' | 'failures' | 'mixed' | 'tiny' | 'versions' | 'grouped' | 'many';
export const CASE_KINDS: readonly CaseKind[] = [
  'improve',
  'regress',
  'noise',
  'few',
  'failures',
  'mixed',
  'tiny',
  'versions',
  'grouped',
  'many',
];

interface SideJson {
  number: number | null;
  rounds: (number[] | null)[];
  failure: { status: string; message: string; round: number | null } | null;
}

export interface WorkloadJson {
  ref: { name: string; benchmark: string; param: number };
  base: SideJson;
  expert: SideJson;
  calibration: SideJson | null;
  calibrationBase: null;
  settled: null;
}

export interface PairCase {
  readonly seed: number;
  readonly kind: CaseKind;
  readonly measurement: {
    rounds: number;
    roundsPerProcess: number;
    /** The rounds the calibration worker took part in (validate.harness.calibrationRounds); absent: every round. */
    calibrationRounds?: number;
    baseVersions: Record<string, string>;
    expertVersions: Record<string, string>;
    workloads: WorkloadJson[];
  };
  readonly paired: PairedOptions;
  readonly adaptive: SequentialOptions;
}

type Effect = 'none' | 'faster' | 'slower' | 'mixed' | 'tiny' | 'fail-base' | 'fail-expert' | 'fail-calibration' | 'changed';

const EFFECTS: Record<CaseKind, readonly Effect[]> = {
  improve: ['faster', 'faster', 'none', 'none', 'none', 'none'],
  regress: ['slower', 'none', 'none', 'none', 'none'],
  noise: ['none', 'none', 'none', 'none', 'none', 'none', 'none'],
  few: ['faster', 'none', 'slower'],
  failures: ['fail-base', 'fail-expert', 'fail-calibration', 'faster', 'none', 'none'],
  mixed: ['mixed', 'mixed', 'faster', 'none', 'none'],
  tiny: ['tiny', 'tiny', 'none', 'none'],
  versions: ['changed', 'faster', 'none', 'none'],
  grouped: ['faster', 'slower', 'none', 'none', 'none'],
  many: ['faster', 'slower', 'tiny', 'mixed', 'none', 'none', 'none', 'none', 'none', 'none', 'none', 'none'],
};

export function pairCase(seed: number, kind: CaseKind): PairCase {
  const random = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const rounds = kind === 'few' ? 2 + Math.floor(random() * 2) : kind === 'many' ? 20 : 4 + Math.floor(random() * 14);
  const roundsPerProcess = kind === 'grouped' ? 2 : 1;
  const samples = 1 + Math.floor(random() * 5);
  const tiny = kind === 'tiny';
  const sigma = tiny ? 0.001 : [0.01, 0.03, 0.08, 0.2][Math.floor(random() * 4)]!;
  const heavy = random() < 0.3;
  const calibrationBias = random() < 0.3 ? 0.03 : 0;
  // a third of the cases bound the calibration worker to its first rounds (no random draw: the
  // other cases' samples stay as they were)
  const calibrationRounds = seed % 3 === 0 && rounds >= 6 ? Math.max(3, Math.floor(rounds / 2)) : null;
  const workloads: WorkloadJson[] = [];
  const baseVersions: Record<string, string> = {};
  const expertVersions: Record<string, string> = {};
  EFFECTS[kind].forEach((effect, i) => {
    const benchmark = `bench.Suite.time_w${i}`;
    const name = i % 3 === 2 ? `${benchmark}(${i})` : benchmark;
    baseVersions[benchmark] = 'v1';
    expertVersions[benchmark] = effect === 'changed' ? 'v2' : 'v1';
    const level = 10 ** (-6 + 4 * random());
    const factor = effect === 'faster' ? 0.2 + 0.6 * random() : effect === 'slower' ? 1.3 + 2 * random() : effect === 'tiny' ? 0.975 : 1;
    const noise = () => {
      const z = normal();
      return Math.exp(sigma * (heavy && random() < 0.1 ? z * 6 : z));
    };
    const batch = (value: number) => Array.from({ length: samples }, () => value * noise());
    const side = (): SideJson => ({ number: 10, rounds: Array.from({ length: rounds }, () => null), failure: null });
    const w: WorkloadJson = {
      ref: { name, benchmark, param: i % 3 === 2 ? i : 0 },
      base: side(),
      expert: side(),
      calibration: side(),
      calibrationBase: null,
      settled: null,
    };
    for (let r = 0; r < rounds; r++) {
      const machine = Math.exp(0.05 * normal());
      const f = effect === 'mixed' ? (random() < 0.65 ? 0.7 : 1.25) : factor;
      w.base.rounds[r] = batch(level * machine);
      w.expert.rounds[r] = batch(level * machine * f);
      w.calibration!.rounds[r] = batch(level * machine * (1 + calibrationBias));
    }
    const stop = 1 + Math.floor(random() * Math.max(1, rounds - 1));
    if (effect === 'fail-base') {
      for (const s of [w.base, w.expert, w.calibration!]) s.rounds.fill(null);
      w.base.failure = { status: 'failed', message: 'ZeroDivisionError: division by zero', round: null };
    } else if (effect === 'fail-expert') {
      for (let r = stop; r < rounds; r++) for (const s of [w.base, w.expert, w.calibration!]) s.rounds[r] = null;
      w.expert.rounds[stop - 1] = null;
      w.expert.failure = { status: 'timeout', message: 'killed after 3 s', round: stop - 1 };
    } else if (effect === 'fail-calibration') {
      for (let r = stop; r < rounds; r++) w.calibration!.rounds[r] = null;
      w.calibration!.failure = { status: 'crashed', message: 'the worker died of SIGSEGV', round: stop };
    }
    if (calibrationRounds !== null) for (let r = calibrationRounds; r < rounds; r++) w.calibration!.rounds[r] = null;
    workloads.push(w);
  });
  const variant = seed % 4;
  const paired: PairedOptions =
    variant === 1
      ? { ...DEFAULT_PAIRED_OPTIONS, alpha: 0.05, thresholdFloor: 1.02 }
      : variant === 2
        ? { ...DEFAULT_PAIRED_OPTIONS, maxPriorDf: 0, consistency: 0.6 }
        : DEFAULT_PAIRED_OPTIONS;
  const looks = [6, 10, 15].filter((l) => l < rounds);
  return {
    seed,
    kind,
    measurement: {
      rounds,
      roundsPerProcess,
      ...(calibrationRounds !== null ? { calibrationRounds } : {}),
      baseVersions,
      expertVersions,
      workloads,
    },
    paired,
    adaptive: { looks, earlyAlphaShare: 0.15, futility: 0.001 },
  };
}

function ready(versions: Record<string, string>): ReadyMessage {
  const benchmarks = Object.fromEntries(Object.entries(versions).map(([name, version]) => [name, { version }]));
  return { event: 'ready', protocol: 1, python: '3.11', benchmarks, workloads: [] } as unknown as ReadyMessage;
}

/** The case as the TypeScript driver would have recorded it. */
export function interleavedOf(c: PairCase): InterleavedMeasurement {
  const m = c.measurement;
  const side = (s: SideJson): SideRecord => ({ number: s.number, rounds: s.rounds, failure: s.failure as SideRecord['failure'] });
  const workloads: WorkloadRecord[] = m.workloads.map((w) => ({
    ref: w.ref,
    base: side(w.base),
    expert: side(w.expert),
    calibration: w.calibration ? side(w.calibration) : null,
    calibrationBase: null,
    settled: null,
  }));
  return {
    base: ready(m.baseVersions),
    expert: ready(m.expertVersions),
    calibration: ready(m.baseVersions),
    workloads,
    rounds: m.rounds,
    roundsPerProcess: m.roundsPerProcess,
    order: [],
    batches: 0,
    durationMs: 0,
    budgetExhausted: false,
    logs: {},
    ...(m.calibrationRounds !== undefined ? { calibrationRounds: m.calibrationRounds } : {}),
  };
}
