import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { humanFileSize, humanFloat, humanTime, humanValue } from '../../pipeline/concepts/asv/human-value.js';
import { isProtectedPath } from '../../pipeline/concepts/measured-patch.js';
import { packagePath } from '../../pipeline/package-root.js';
import { mulberry32 } from '../../pipeline/random.js';
import { benchmarkDirOf } from '../../pipeline/services/environments/verification.js';
import { expectedRoundMs, nextRound, waterLevel, type PlannedWorkload } from '../../stages/validate/harness/plan.js';
import {
  measureInterleaved,
  type HarnessWorker,
  type InterleaveSettings,
  type Side,
  type SideRecord,
} from '../../stages/validate/harness/interleave.js';
import type { BatchCommand, FatalMessage, ReadyMessage } from '../../stages/validate/harness/messages.js';
import type { Settlement } from '../../stages/validate/paired/sequential.js';

/**
 * The logic that exists in both languages, as cases both answer: perfmine-bench's value formatting
 * (python/perfmine_bench_format.py; pipeline/concepts/asv/human-value.ts), the interleaved driver's
 * schedule (python/perfmine_bench_interleave.py; stages/validate/harness/interleave.ts) and the
 * paths a measured change keeps from the base (python/perfmine_verify.py's pathspecs with the
 * harness's reading of the asv config; pipeline/concepts/measured-patch.ts with
 * verification.ts's benchmarkDirOf). The TypeScript answers are computed here; the Python ones by
 * test/python/parity_driver.py, with the host's python3 (the parity tests) or an image's (the
 * in-image test). The verdict's parity is test/bench-tool/verdict-parity.test.ts.
 */

export const PYTHON_DIR = packagePath('python');
export const DRIVER = join(packagePath('test', 'python'), 'parity_driver.py');

export type Kind = 'format' | 'interleave' | 'plan' | 'protected';

/** The Python answers to the cases, from one run of the driver with the host's python3. */
export function pythonAnswers<T>(kind: Kind, cases: readonly unknown[]): T[] {
  const out = spawnSync('python3', [DRIVER, PYTHON_DIR, kind], {
    input: JSON.stringify(cases),
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  if (out.status !== 0) throw new Error(`parity_driver.py ${kind} exited ${out.status}: ${out.stderr}`);
  return JSON.parse(out.stdout) as T[];
}

// ---------------------------------------------------------------- value formatting

/** A double as JavaScript writes it (`-0` kept): Python's float() reads it back exactly. */
const text = (x: number): string => (Object.is(x, -0) ? '-0' : String(x));
const read = (s: string | null): number | null => (s === null ? null : Number(s));

export type FormatCase =
  | { fn: 'float'; value: string; significant: number; truncateSmall: number | null; significantZeros: boolean }
  | { fn: 'time' | 'size'; value: string; err: string | null }
  | { fn: 'value'; value: string | null; unit: string | null; err: string | null; integer?: boolean };

/** Values at the edges of every branch (units, exponent form, rounding ties, NaN, infinities, subnormals). */
const EDGE_VALUES: readonly number[] = [
  0,
  -0,
  1,
  -1,
  2,
  0.5,
  0.125,
  2.5,
  3.5,
  0.0625,
  1 / 3,
  2 / 3,
  0.1,
  0.2,
  0.3,
  9.995,
  9.9995,
  99.95,
  999.5,
  999.4999,
  1000,
  1000.5,
  0.001,
  0.0009995,
  0.00099949,
  0.0001,
  0.00001,
  0.000009999,
  1e-5,
  1e-6,
  1e-7,
  1e-8,
  1e-9,
  9.999e-10,
  1e-10,
  1e-12,
  5e-324,
  2.2250738585072014e-308,
  1e8,
  99_999_999.5,
  1e9,
  999_999_999,
  123_456_789,
  1e12,
  1e15,
  2 ** 53,
  2 ** 53 + 2,
  1e16,
  1e21,
  1e300,
  1.7976931348623157e308,
  60,
  59.99,
  3600,
  86_400,
  604_800,
  31_449_600,
  3_144_960_000,
  1e6,
  999_999,
  1e7,
  1024,
  65_536,
  1_000_000_000,
  1e18,
  1e24,
  1e27,
  0.015,
  0.025,
  0.035,
  0.045,
  1.005,
  1.015,
  2.675,
  1.45,
  1.55,
  0.95,
  0.995,
  42,
  -42.5,
  -0.001,
  -1e-9,
  -1e9,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
];

/** The formatting cases: every edge value through every function, and seeded values over 40 orders of magnitude. */
export function formatCases(): FormatCase[] {
  const random = mulberry32(38);
  const drawn = Array.from({ length: 400 }, (_, i) => {
    const v = 10 ** (random() * 40 - 20) * (1 + random());
    return i % 7 === 0 ? -v : i % 5 === 0 ? Math.round(v) : v;
  });
  const values = [...EDGE_VALUES, ...drawn];
  const errs = [null, 0, 1e-9, 0.0004, 0.5, 3, 1500, Number.NaN];
  const cases: FormatCase[] = [];
  for (const [i, v] of values.entries()) {
    for (const significant of [1, 2, 3, 4])
      for (const truncateSmall of [null, 2])
        cases.push({ fn: 'float', value: text(v), significant, truncateSmall, significantZeros: (i + significant) % 2 === 0 });
    const err = errs[i % errs.length]!;
    const e = err === null ? null : text(err);
    const positive = Math.abs(v);
    cases.push({ fn: 'time', value: text(positive), err: null }, { fn: 'time', value: text(positive), err: e });
    // a size is finite: asv's human_file_size, as its two ports, has no answer for NaN or the
    // infinities (human_value answers `n/a` for NaN before; the harness writes no infinity: null)
    if (Number.isFinite(v)) cases.push({ fn: 'size', value: text(v), err: null }, { fn: 'size', value: text(positive), err: e });
    for (const unit of ['seconds', 'bytes', 'unit', null])
      if (unit !== 'bytes' || !Number.isFinite(v) === Number.isNaN(v))
        cases.push({ fn: 'value', value: text(v), unit, err: i % 3 === 0 ? null : e });
    if (Number.isSafeInteger(v)) cases.push({ fn: 'value', value: text(v), unit: 'unit', err: null, integer: true });
  }
  cases.push({ fn: 'value', value: null, unit: 'seconds', err: null }, { fn: 'value', value: null, unit: null, err: '0.5' });
  return cases;
}

export function formatTs(c: FormatCase): string {
  switch (c.fn) {
    case 'float':
      return humanFloat(Number(c.value), c.significant, c.truncateSmall ?? undefined, c.significantZeros);
    case 'time':
      return humanTime(Number(c.value), read(c.err));
    case 'size':
      return humanFileSize(Number(c.value), read(c.err));
    case 'value':
      return humanValue(read(c.value), c.unit, read(c.err));
  }
}

// ---------------------------------------------------------------- the interleaved schedule

export interface InterleaveCase {
  readonly label: string;
  readonly settings: {
    rounds: number;
    roundsPerProcess: number;
    samples: number;
    calibration: boolean;
    seed: number;
    budgetSeconds: number;
    batchTimeoutSeconds: number | null;
    clock: 'wall' | 'cpu';
    warmupSeconds: number;
    looks: number[];
    /** What the sides take turns by (absent: batch, as a driver without the setting). */
    interleave?: 'batch' | 'sample';
    /** How the time budget is spent (absent: even, as a driver without the setting). */
    plan?: 'cost' | 'even';
    /** The rounds the calibration worker takes part in (absent or null: every round). */
    calibrationRounds?: number | null;
    /** Plan cost: the rounds every workload takes before the plan may leave it out (absent: the first look, else 6). */
    minRounds?: number;
    /** Sample by sample: samples a round by each workload's setup (absent: fixed). */
    samplesPerRound?: 'by-setup' | 'fixed';
  };
  readonly workloads: string[];
  /** Workloads a side's worker does not have. */
  readonly missing: Partial<Record<Side, string[]>>;
  /** Sides whose worker cannot import the suite. */
  readonly fatal: Side[];
  /**
   * A side's batch of a workload that fails: in the warm-up (round null) or in a round (counted
   * among the rounds the side measured the workload in: one the plan left it out of, or one past
   * the calibration's rounds, does not count); sample by sample, the round's one-sample batch of
   * turn `turn` (0-based, absent: 0).
   */
  readonly failures: {
    side: Side;
    workload: string;
    round: number | null;
    turn?: number;
    status: 'failed' | 'timeout' | 'crashed' | 'skipped';
  }[];
  /** A side's k-th restart (1-based) that cannot start a worker. */
  readonly restartFailures: { side: Side; restart: number }[];
  /** After round N (a look), the workloads settled and as what. */
  readonly settle: Record<string, Record<string, Settlement>>;
  /** What the scripted clock moves by a batch. */
  readonly secondsPerBatch: number;
  /** What it moves by a batch of these workloads instead (absent: secondsPerBatch for every one). */
  readonly secondsPerBatchOf?: Record<string, number>;
  /** Single-value workloads (mem, peakmem, track): one value a batch, no `number`. */
  readonly singleValue?: string[];
  /** What the scripted clock moves by each side's restart (fresh worker processes between rounds); absent: nothing. */
  readonly secondsPerRestart?: number;
  /**
   * The setup seconds a batch of these workloads reports in its account (with its batch time as
   * its samples'; 30 s more in a turn with warm-up seconds); absent: 0.
   */
  readonly setupSecondsOf?: Record<string, number>;
}

interface SideAnswer {
  number: number | null;
  rounds: (readonly number[] | null)[];
  failure: { status: string; round: number | null } | null;
}

export interface InterleaveAnswer {
  order: string[];
  rounds: number;
  batches: number;
  budgetExhausted: boolean;
  /** The calibration's rounds at most, as the measurement records it (null: every round). */
  calibrationRounds: number | null;
  asked: Partial<Record<Side, Omit<BatchCommand, 'id' | 'op'>[]>>;
  /** Each side's restarts, by the benchmarks each named (null: none named, the whole suite). */
  restarted: Partial<Record<Side, (string[] | null)[]>>;
  workloads: {
    name: string;
    base: SideAnswer;
    expert: SideAnswer;
    calibration: SideAnswer | null;
    settled: { round: number; as: Settlement } | null;
    /** Rounds the time plan left it out of. */
    leftOut: number;
    /** Samples a round from its second round on, when its setup made them fewer (null: the protocol's). */
    samples: number | null;
  }[];
}

const base = (over: Partial<InterleaveCase['settings']> = {}): InterleaveCase['settings'] => ({
  rounds: 6,
  roundsPerProcess: 1,
  samples: 3,
  calibration: true,
  seed: 1,
  budgetSeconds: 1e9,
  batchTimeoutSeconds: 60,
  clock: 'cpu',
  warmupSeconds: 0,
  looks: [],
  ...over,
});

const plain = (label: string, over: Partial<InterleaveCase> = {}): InterleaveCase => ({
  label,
  settings: base(),
  workloads: ['time_a', 'time_b', 'time_c'],
  missing: {},
  fatal: [],
  failures: [],
  restartFailures: [],
  settle: {},
  secondsPerBatch: 1,
  ...over,
});

/** Schedules with every branch of the driver: seeds, process rounds, failures where they can happen, restarts, budgets, looks. */
export function interleaveCases(): InterleaveCase[] {
  const cases: InterleaveCase[] = [];
  for (const seed of [0, 1, 7, 12345, 2 ** 31 - 1, 2 ** 32 - 1])
    for (const [rounds, rpp] of [
      [1, 1],
      [4, 1],
      [6, 2],
      [7, 3],
    ] as const)
      cases.push(
        plain(`seed ${seed}, ${rounds} rounds of ${rpp}`, {
          settings: base({ seed, rounds, roundsPerProcess: rpp, calibration: seed % 2 === 0 }),
          workloads: Array.from({ length: 1 + (seed % 5) }, (_, i) => `time_${i}`),
        }),
      );
  cases.push(
    plain('one sample a batch, warm-up seconds, wall clock, no timeout', {
      settings: base({ samples: 1, warmupSeconds: 0.25, clock: 'wall', batchTimeoutSeconds: null }),
    }),
    plain('the base fails in the warm-up', { failures: [{ side: 'base', workload: 'time_b', round: null, status: 'failed' }] }),
    plain('the working side fails in the warm-up', { failures: [{ side: 'expert', workload: 'time_a', round: null, status: 'timeout' }] }),
    plain('the calibration fails in the warm-up', {
      failures: [{ side: 'calibration', workload: 'time_c', round: null, status: 'crashed' }],
    }),
    plain('failures part-way on every side', {
      settings: base({ rounds: 8, seed: 99 }),
      failures: [
        { side: 'base', workload: 'time_a', round: 2, status: 'failed' },
        { side: 'expert', workload: 'time_b', round: 4, status: 'crashed' },
        { side: 'calibration', workload: 'time_c', round: 1, status: 'timeout' },
        { side: 'calibration', workload: 'time_a', round: 0, status: 'skipped' },
      ],
    }),
    plain('every workload fails: no round', {
      failures: ['time_a', 'time_b', 'time_c'].map((workload) => ({
        side: 'base' as const,
        workload,
        round: null,
        status: 'failed' as const,
      })),
    }),
    plain('every workload fails part-way: the rounds stop', {
      failures: ['time_a', 'time_b', 'time_c'].map((workload) => ({
        side: 'expert' as const,
        workload,
        round: 2,
        status: 'failed' as const,
      })),
    }),
    plain('the working side lacks a workload', { missing: { expert: ['time_b'] } }),
    plain('the calibration worker lacks a workload', { missing: { calibration: ['time_c'] }, settings: base({ seed: 5 }) }),
    plain('the base cannot import the suite', { fatal: ['base'] }),
    plain('the working side cannot import the suite', { fatal: ['expert'] }),
    plain('the calibration cannot import the suite', { fatal: ['calibration'] }),
    plain('the calibration worker cannot start again', { restartFailures: [{ side: 'calibration', restart: 2 }] }),
    plain('the working side cannot start again', { restartFailures: [{ side: 'expert', restart: 3 }] }),
    plain('the base cannot start again, every 2 rounds', {
      settings: base({ rounds: 9, roundsPerProcess: 2 }),
      restartFailures: [{ side: 'base', restart: 2 }],
    }),
    plain('no calibration', { settings: base({ calibration: false, seed: 3 }) }),
    plain('the budget stops the rounds', { settings: base({ budgetSeconds: 40.5 }) }),
    plain('the budget stops the rounds, slow batches', { settings: base({ budgetSeconds: 100.5, seed: 4 }), secondsPerBatch: 7 }),
    plain('a budget that leaves one round', { settings: base({ budgetSeconds: 0.5 }) }),
    plain('looks settle workloads', {
      settings: base({ rounds: 8, looks: [2, 4, 8] }),
      settle: { '2': { time_a: 'changed' }, '4': { time_b: 'unchanged', time_zzz: 'changed' }, '8': { time_c: 'changed' } },
    }),
    plain('a look settles everything', {
      settings: base({ rounds: 8, looks: [3] }),
      settle: { '3': { time_a: 'changed', time_b: 'unchanged', time_c: 'unchanged' } },
    }),
    plain('a look settles a failed workload', {
      settings: base({ rounds: 6, looks: [2] }),
      failures: [{ side: 'base', workload: 'time_a', round: 1, status: 'failed' }],
      settle: { '2': { time_a: 'changed', time_b: 'changed' } },
    }),
  );
  cases.push(...sampleCases(), ...costPlanCases(), ...calibrationRoundsCases(), ...singleValueCases(), ...setupCases());
  return cases;
}

/**
 * The round plan by cost (plan `cost`): an expensive workload (20 times the others' batch) that
 * the budget's share leaves out of rounds, the budget stopping the rounds after that, looks
 * (the first one the plan's minimum), failures, and budgets that fit everything or one round.
 */
function costPlanCases(): InterleaveCase[] {
  const byCost = (over: Partial<InterleaveCase['settings']> = {}) => base({ plan: 'cost', ...over });
  const cost = (label: string, over: Partial<InterleaveCase> = {}): InterleaveCase =>
    plain(`by cost: ${label}`, { settings: byCost(), secondsPerBatchOf: { time_c: 20 }, ...over });
  return [
    cost('the expensive workload is left out of the last rounds', { settings: byCost({ rounds: 10, budgetSeconds: 650 }) }),
    cost('the expensive workload is left out, then the budget stops the rounds', {
      settings: byCost({ rounds: 30, budgetSeconds: 500, seed: 3 }),
    }),
    cost('left out, then a budget the last round fits exactly', { settings: byCost({ rounds: 30, budgetSeconds: 504, seed: 3 }) }),
    cost('the expensive workload is left out, then the budget stops the rounds, 2 rounds a process', {
      settings: byCost({ rounds: 30, roundsPerProcess: 2, budgetSeconds: 700.5, seed: 9 }),
      workloads: ['time_a', 'time_b', 'time_c', 'time_d'],
      secondsPerBatchOf: { time_c: 20, time_d: 2.5 },
    }),
    cost("a minimum of 3 rounds (the verdict's minPairs) before the plan may leave a workload out", {
      settings: byCost({ rounds: 12, looks: [6, 10], minRounds: 3, budgetSeconds: 300, seed: 4 }),
    }),
    cost('restarts that cost time are reserved for the rounds ahead', {
      settings: byCost({ rounds: 10, budgetSeconds: 700, seed: 5 }),
      secondsPerRestart: 4,
    }),
    cost('restarts that cost time, 3 rounds a process, the budget stops the rounds', {
      settings: byCost({ rounds: 30, roundsPerProcess: 3, budgetSeconds: 650, seed: 13 }),
      secondsPerRestart: 7.5,
    }),
    cost('looks: the first is the plan minimum, settled workloads leave the plan', {
      settings: byCost({ rounds: 12, looks: [3, 6, 9], budgetSeconds: 400, seed: 21 }),
      settle: { '3': { time_a: 'unchanged' }, '6': { time_b: 'changed' } },
    }),
    cost('looks, sample by sample', {
      settings: byCost({ rounds: 12, looks: [4, 8], budgetSeconds: 1200.5, seed: 22, interleave: 'sample' }),
      settle: { '4': { time_b: 'unchanged' } },
    }),
    cost('sample by sample, the budget stops the rounds', {
      settings: byCost({ rounds: 20, budgetSeconds: 1000, seed: 5, interleave: 'sample', samples: 2 }),
      workloads: ['time_a', 'time_b', 'time_c', 'time_d'],
    }),
    cost('the expensive workload fails part-way', {
      settings: byCost({ rounds: 12, budgetSeconds: 700, seed: 13 }),
      failures: [{ side: 'expert', workload: 'time_c', round: 7, status: 'crashed' }],
    }),
    cost('a cheap workload fails part-way, no calibration', {
      settings: byCost({ rounds: 14, budgetSeconds: 500, seed: 14, calibration: false }),
      failures: [{ side: 'base', workload: 'time_a', round: 8, status: 'failed' }],
    }),
    cost('the budget fits every round: as the even plan', { settings: byCost({ rounds: 8, budgetSeconds: 1e6 }) }),
    cost('a budget that leaves one round', { settings: byCost({ budgetSeconds: 0.5 }) }),
    cost('the working side cannot start again', {
      settings: byCost({ rounds: 12, budgetSeconds: 650, seed: 31 }),
      restartFailures: [{ side: 'expert', restart: 9 }],
    }),
    plain('by even, given: every workload every round until the budget', {
      settings: base({ plan: 'even', rounds: 12, budgetSeconds: 650 }),
      secondsPerBatchOf: { time_c: 20 },
    }),
  ];
}

/** The calibration bounded to its first rounds (calibrationRounds), batch by batch and sample by sample. */
function calibrationRoundsCases(): InterleaveCase[] {
  const cases: InterleaveCase[] = [];
  for (const interleave of ['batch', 'sample'] as const) {
    const bounded = (label: string, over: Partial<InterleaveCase['settings']>, more: Partial<InterleaveCase> = {}): InterleaveCase =>
      plain(`calibration rounds, by ${interleave}: ${label}`, { settings: base({ interleave, ...over }), ...more });
    cases.push(
      bounded('3 of 6 rounds', { rounds: 6, calibrationRounds: 3, seed: 41 }),
      bounded('2 of 7 rounds, 2 a process', { rounds: 7, calibrationRounds: 2, roundsPerProcess: 2, seed: 42 }),
      bounded('3 of 5 rounds, 2 a process', { rounds: 5, calibrationRounds: 3, roundsPerProcess: 2, seed: 43 }),
      bounded(
        'the calibration fails before the bound',
        { rounds: 6, calibrationRounds: 3, seed: 44 },
        {
          failures: [{ side: 'calibration', workload: 'time_b', round: 1, status: 'timeout' }],
        },
      ),
      bounded(
        'a failure scripted past the bound never happens',
        { rounds: 7, calibrationRounds: 2, roundsPerProcess: 2, seed: 45 },
        {
          failures: [{ side: 'calibration', workload: 'time_a', round: 4, status: 'failed' }],
        },
      ),
      bounded(
        'the calibration fails in the warm-up',
        { rounds: 5, calibrationRounds: 2, seed: 46 },
        {
          failures: [{ side: 'calibration', workload: 'time_c', round: null, status: 'crashed' }],
        },
      ),
      bounded(
        'the calibration worker cannot start again before the bound',
        { rounds: 6, calibrationRounds: 3, seed: 47 },
        {
          restartFailures: [{ side: 'calibration', restart: 1 }],
        },
      ),
      bounded(
        'the base cannot start again after the bound',
        { rounds: 7, calibrationRounds: 2, seed: 48 },
        {
          restartFailures: [{ side: 'base', restart: 4 }],
        },
      ),
      bounded('the calibration cannot import the suite', { rounds: 5, calibrationRounds: 2, seed: 49 }, { fatal: ['calibration'] }),
      bounded('the working side cannot import the suite', { rounds: 5, calibrationRounds: 2, seed: 49 }, { fatal: ['expert'] }),
      bounded('a bound past the rounds', { rounds: 5, calibrationRounds: 7, seed: 50 }),
      bounded('no calibration', { rounds: 5, calibrationRounds: 2, calibration: false, seed: 51 }),
      bounded(
        'a look settles workloads across the bound',
        { rounds: 7, calibrationRounds: 3, looks: [2, 4], seed: 52 },
        {
          settle: { '2': { time_a: 'changed' }, '4': { time_c: 'unchanged' } },
        },
      ),
      bounded(
        'planned by cost',
        { rounds: 12, calibrationRounds: 3, plan: 'cost', budgetSeconds: interleave === 'batch' ? 500 : 1500, seed: 53 },
        {
          secondsPerBatchOf: { time_b: 20 },
        },
      ),
    );
  }
  cases.push(
    plain('calibration rounds, by sample: a later turn fails before the bound', {
      settings: base({ interleave: 'sample', rounds: 6, calibrationRounds: 2, samples: 4, seed: 54 }),
      failures: [{ side: 'calibration', workload: 'time_c', round: 1, turn: 2, status: 'failed' }],
    }),
  );
  return cases;
}

/** Single-value workloads (mem, peakmem, track): one value a batch, batch turns sample by sample too. */
function singleValueCases(): InterleaveCase[] {
  const workloads = ['time_a', 'mem_b', 'time_c', 'peakmem_d'];
  const single = (label: string, over: Partial<InterleaveCase> = {}): InterleaveCase =>
    plain(`single values: ${label}`, { workloads, singleValue: ['mem_b', 'peakmem_d'], ...over });
  return [
    single('sample by sample', { settings: base({ interleave: 'sample', seed: 61 }) }),
    single('sample by sample, warm-up seconds, 2 rounds a process', {
      settings: base({ interleave: 'sample', samples: 4, warmupSeconds: 0.25, roundsPerProcess: 2, seed: 62 }),
    }),
    single('sample by sample, failures', {
      settings: base({ interleave: 'sample', rounds: 7, seed: 63 }),
      failures: [
        { side: 'expert', workload: 'mem_b', round: 2, status: 'failed' },
        { side: 'calibration', workload: 'peakmem_d', round: 1, status: 'timeout' },
        { side: 'base', workload: 'time_a', round: 3, turn: 1, status: 'crashed' },
      ],
    }),
    single('sample by sample, every workload single-valued', {
      settings: base({ interleave: 'sample', seed: 64 }),
      workloads: ['mem_a', 'track_b'],
      singleValue: ['mem_a', 'track_b'],
    }),
    single('batch by batch', { settings: base({ interleave: 'batch', seed: 65 }) }),
    single('sample by sample, calibration rounds and a plan by cost', {
      settings: base({ interleave: 'sample', rounds: 16, calibrationRounds: 3, plan: 'cost', budgetSeconds: 600, seed: 66 }),
      secondsPerBatchOf: { peakmem_d: 12 },
    }),
  ];
}

/** Samples a round by setup (samplesPerRound by-setup): a workload whose setup outweighs its sample takes fewer turns from its second round. */
function setupCases(): InterleaveCase[] {
  const settings = (over: Partial<InterleaveCase['settings']> = {}) =>
    base({ interleave: 'sample', samplesPerRound: 'by-setup', samples: 5, rounds: 6, ...over });
  const setup = (label: string, over: Partial<InterleaveCase> = {}): InterleaveCase =>
    plain(`by setup: ${label}`, { settings: settings(), setupSecondsOf: { time_b: 2, time_c: 9 }, ...over });
  return [
    setup('cheap, costly and dominant setups'),
    setup('seeds', { settings: settings({ seed: 71 }) }),
    setup('one sample a round already', { settings: settings({ samples: 1, seed: 72 }) }),
    setup('batch by batch: no effect', { settings: settings({ interleave: 'batch', seed: 73 }) }),
    setup('fixed: no effect', { settings: settings({ samplesPerRound: 'fixed', seed: 74 }) }),
    setup('the base fails on a later turn of the first round', {
      settings: settings({ seed: 75 }),
      failures: [{ side: 'base', workload: 'time_c', round: 0, turn: 2, status: 'failed' }],
    }),
    setup('the calibration fails mid-round', {
      settings: settings({ seed: 76 }),
      failures: [{ side: 'calibration', workload: 'time_b', round: 0, turn: 1, status: 'crashed' }],
    }),
    setup('a plan by cost, a budget, two rounds a process', {
      settings: settings({ plan: 'cost', rounds: 12, roundsPerProcess: 2, budgetSeconds: 200, calibrationRounds: 4, seed: 77 }),
      secondsPerBatchOf: { time_a: 0.5 },
      secondsPerRestart: 3,
    }),
    setup('looks settle a workload', {
      settings: settings({ rounds: 8, looks: [3, 6], seed: 78 }),
      settle: { '3': { time_c: 'unchanged' } },
    }),
    setup('a setup slightly over a sample', { setupSecondsOf: { time_a: 1.2, time_b: 0.01 }, settings: settings({ seed: 79 }) }),
    setup("two samples, the first turn's setup heavier (a setup_cache)", {
      settings: settings({ samples: 2, warmupSeconds: 0.25, seed: 80 }),
    }),
  ];
}

/** Sample by sample (interleave `sample`): the sides take turns one-sample batch by one-sample batch. */
function sampleCases(): InterleaveCase[] {
  const bySample = (over: Partial<InterleaveCase['settings']> = {}) => base({ interleave: 'sample', ...over });
  const sample = (label: string, over: Partial<InterleaveCase> = {}): InterleaveCase =>
    plain(`by sample: ${label}`, { settings: bySample(), ...over });
  const cases: InterleaveCase[] = [];
  for (const [i, seed] of [0, 1, 7, 12345, 2 ** 31 - 1, 2 ** 32 - 1].entries())
    for (const [j, [rounds, rpp]] of (
      [
        [1, 1],
        [4, 1],
        [6, 2],
        [7, 3],
      ] as const
    ).entries())
      cases.push(
        sample(`seed ${seed}, ${rounds} rounds of ${rpp}`, {
          settings: bySample({ seed, rounds, roundsPerProcess: rpp, samples: 2 + ((i + j) % 3), calibration: (i + j) % 2 === 0 }),
          workloads: Array.from({ length: 1 + ((i + j) % 4) }, (_, k) => `time_${k}`),
        }),
      );
  cases.push(
    sample('one sample a batch (one turn a round)', { settings: bySample({ samples: 1, seed: 21 }) }),
    sample('warm-up seconds before the first turn only, wall clock, no timeout', {
      settings: bySample({ samples: 4, warmupSeconds: 0.25, clock: 'wall', batchTimeoutSeconds: null, seed: 8 }),
    }),
    sample('the base fails in the warm-up', { failures: [{ side: 'base', workload: 'time_b', round: null, status: 'failed' }] }),
    sample('the working side fails in the warm-up', {
      failures: [{ side: 'expert', workload: 'time_a', round: null, status: 'timeout' }],
    }),
    sample('the calibration fails in the warm-up', {
      failures: [{ side: 'calibration', workload: 'time_c', round: null, status: 'crashed' }],
    }),
    sample('failures part-way on every side, on first and later turns', {
      settings: bySample({ rounds: 8, seed: 99 }),
      failures: [
        { side: 'base', workload: 'time_a', round: 2, turn: 0, status: 'failed' },
        { side: 'expert', workload: 'time_b', round: 4, turn: 2, status: 'crashed' },
        { side: 'calibration', workload: 'time_c', round: 1, turn: 1, status: 'timeout' },
        { side: 'calibration', workload: 'time_a', round: 0, status: 'skipped' },
      ],
    }),
    sample('the base fails on the last turn of a round', {
      settings: bySample({ samples: 4, seed: 3 }),
      failures: [{ side: 'base', workload: 'time_c', round: 3, turn: 3, status: 'timeout' }],
    }),
    sample('the working side fails on a later turn of the first round', {
      settings: bySample({ seed: 17 }),
      failures: [{ side: 'expert', workload: 'time_a', round: 0, turn: 1, status: 'failed' }],
    }),
    sample('the calibration fails mid-round: the round goes on without it', {
      settings: bySample({ samples: 5, seed: 40 }),
      failures: [
        { side: 'calibration', workload: 'time_b', round: 2, turn: 2, status: 'crashed' },
        { side: 'calibration', workload: 'time_c', round: 0, turn: 4, status: 'failed' },
      ],
    }),
    sample('every workload fails part-way on a later turn: the rounds stop', {
      failures: ['time_a', 'time_b', 'time_c'].map((workload, k) => ({
        side: k === 1 ? ('base' as const) : ('expert' as const),
        workload,
        round: 2,
        turn: 1 + (k % 2),
        status: 'failed' as const,
      })),
    }),
    sample('every workload fails in the warm-up: no round', {
      failures: ['time_a', 'time_b', 'time_c'].map((workload) => ({
        side: 'base' as const,
        workload,
        round: null,
        status: 'failed' as const,
      })),
    }),
    sample('the working side lacks a workload', { missing: { expert: ['time_b'] } }),
    sample('the calibration worker lacks a workload', { missing: { calibration: ['time_c'] }, settings: bySample({ seed: 5 }) }),
    sample('the calibration cannot import the suite', { fatal: ['calibration'] }),
    sample('the calibration worker cannot start again', { restartFailures: [{ side: 'calibration', restart: 2 }] }),
    sample('the base cannot start again, every 2 rounds', {
      settings: bySample({ rounds: 9, roundsPerProcess: 2, seed: 6 }),
      restartFailures: [{ side: 'base', restart: 2 }],
    }),
    sample('3 rounds a process, a later-turn failure in the second process', {
      settings: bySample({ rounds: 7, roundsPerProcess: 3, samples: 4, seed: 1234 }),
      failures: [{ side: 'expert', workload: 'time_b', round: 4, turn: 3, status: 'skipped' }],
    }),
    sample('no calibration', { settings: bySample({ calibration: false, seed: 3 }) }),
    sample('the budget stops the rounds', { settings: bySample({ budgetSeconds: 120.5 }) }),
    sample('the budget stops the rounds, slow batches', { settings: bySample({ budgetSeconds: 500.5, seed: 4 }), secondsPerBatch: 7 }),
    sample('a budget that leaves one round', { settings: bySample({ budgetSeconds: 0.5 }) }),
    sample('looks settle workloads', {
      settings: bySample({ rounds: 8, looks: [2, 4, 8], seed: 11 }),
      settle: { '2': { time_a: 'changed' }, '4': { time_b: 'unchanged', time_zzz: 'changed' }, '8': { time_c: 'changed' } },
    }),
    sample('a look settles everything', {
      settings: bySample({ rounds: 8, looks: [3] }),
      settle: { '3': { time_a: 'changed', time_b: 'unchanged', time_c: 'unchanged' } },
    }),
    sample('a look settles a workload that failed on a later turn', {
      settings: bySample({ rounds: 6, looks: [2] }),
      failures: [{ side: 'base', workload: 'time_a', round: 1, turn: 2, status: 'failed' }],
      settle: { '2': { time_a: 'changed', time_b: 'changed' } },
    }),
  );
  return cases;
}

/** The TypeScript driver's answer to a case, with workers and a clock scripted as the Python driver's. */
export async function interleaveTs(c: InterleaveCase): Promise<InterleaveAnswer> {
  let clock = 0;
  const asked: Partial<Record<Side, Omit<BatchCommand, 'id' | 'op'>[]>> = {};
  const restarts: Partial<Record<Side, number>> = {};
  const restarted: Partial<Record<Side, (string[] | null)[]>> = {};
  const refs = c.workloads.map((name) => ({ name, benchmark: `bench.${name}`, param: 0 }));
  const worker = (side: Side): HarnessWorker => {
    const names = refs.filter((w) => !(c.missing[side] ?? []).includes(w.name));
    const start: ReadyMessage | FatalMessage = c.fatal.includes(side)
      ? { event: 'fatal', reason: 'import', message: 'scripted' }
      : { event: 'ready', protocol: 1, python: '3', workloads: names, benchmarks: {} };
    return {
      start,
      batch: (command) => {
        const mine = (asked[side] ??= []);
        mine.push(command);
        const name = command.benchmark.slice('bench.'.length);
        clock += (c.secondsPerBatchOf?.[name] ?? c.secondsPerBatch) * 1000;
        // the warm-up batch (no warm-up seconds given), then one batch a round while the side measures
        // it (sample by sample: `samples` one-sample batches a round, a turn each; a single-value
        // workload's one batch)
        const single = (c.singleValue ?? []).includes(name);
        const warmup = command.warmup === null;
        const seen = mine.filter((x) => x.benchmark === command.benchmark).length - 2;
        const turns = c.settings.interleave === 'sample' && !single ? c.settings.samples : 1;
        const round = warmup ? null : Math.floor(seen / turns);
        const turn = warmup ? 0 : seen % turns;
        const failure = c.failures.find((f) => f.side === side && f.workload === name && f.round === round && (f.turn ?? 0) === turn);
        if (failure) return Promise.resolve({ ok: false, status: failure.status, message: 'scripted' });
        const value = 0.001 * (1 + c.workloads.indexOf(name)) * (side === 'expert' ? 2 : 1);
        if (single) return Promise.resolve({ ok: true, samples: [value], number: null });
        // a round's first turn (its warm-up seconds) reports 30 s more setup, as a setup_cache would
        const account = {
          setup: (c.setupSecondsOf?.[name] ?? 0) + (command.warmup ? 30 : 0),
          warmup: 0,
          samples: c.secondsPerBatchOf?.[name] ?? c.secondsPerBatch,
        };
        return Promise.resolve({
          ok: true,
          samples: Array.from({ length: command.samples }, (_, i) => value + 0.0001 * i),
          number: command.number || 7,
          account,
        });
      },
      restart: (_signal, benchmarks) => {
        (restarted[side] ??= []).push(benchmarks && benchmarks.length > 0 ? [...benchmarks] : null);
        const k = (restarts[side] = (restarts[side] ?? 0) + 1);
        clock += (c.secondsPerRestart ?? 0) * 1000;
        return Promise.resolve(
          c.restartFailures.some((f) => f.side === side && f.restart === k) ? { ok: false, message: 'scripted' } : { ok: true },
        );
      },
      fingerprint: () => Promise.reject(new Error('not asked')),
      outline: () => Promise.resolve(null),
      modules: () => Promise.resolve(null),
      log: () => '',
      close: () => Promise.resolve(),
    };
  };
  const s = c.settings;
  const settle = (m: { rounds: number }): ReadonlyMap<string, Settlement> => new Map(Object.entries(c.settle[String(m.rounds)] ?? {}));
  const settings: InterleaveSettings = {
    rounds: s.rounds,
    roundsPerProcess: s.roundsPerProcess,
    samples: s.samples,
    mode: 'alternate',
    calibration: s.calibration,
    seed: s.seed,
    budgetMs: s.budgetSeconds * 1000,
    batchTimeoutSeconds: s.batchTimeoutSeconds,
    clock: s.clock,
    warmupSeconds: s.warmupSeconds,
    ...(s.interleave === undefined ? {} : { interleave: s.interleave }),
    ...(s.plan === undefined ? {} : { plan: s.plan }),
    ...(s.calibrationRounds === undefined || s.calibrationRounds === null ? {} : { calibrationRounds: s.calibrationRounds }),
    ...(s.minRounds === undefined ? {} : { minRounds: s.minRounds }),
    ...(s.samplesPerRound === undefined ? {} : { samplesPerRound: s.samplesPerRound }),
    now: () => clock,
    // the plan's costs are on the account's clock: the scripted one too
    monotonic: () => clock,
    looks: s.looks,
    ...(Object.keys(c.settle).length > 0 ? { settle } : {}),
  };
  const m = await measureInterleaved({ open: (side) => Promise.resolve(worker(side)) }, settings);
  const side = (r: SideRecord): SideAnswer => ({
    number: r.number,
    rounds: r.rounds,
    failure: r.failure === null ? null : { status: r.failure.status, round: r.failure.round },
  });
  return {
    order: [...m.order],
    rounds: m.rounds,
    batches: m.batches,
    budgetExhausted: m.budgetExhausted,
    calibrationRounds: m.calibrationRounds ?? null,
    asked,
    restarted,
    workloads: m.workloads.map((w) => ({
      name: w.ref.name,
      base: side(w.base),
      expert: side(w.expert),
      calibration: w.calibration === null ? null : side(w.calibration),
      settled: w.settled,
      leftOut: w.leftOut ?? 0,
      samples: w.samples ?? null,
    })),
  };
}

// ---------------------------------------------------------------- the round plan

export interface PlanCase {
  readonly label: string;
  readonly workloads: PlannedWorkload[];
  readonly budgetLeftMs: number;
  readonly minRounds: number;
}

export interface PlanAnswer {
  /** The names the next round measures, sorted. */
  next: string[];
  expected: number;
  /** The water level of the workloads' whole costs in what there is (null: Infinity, everything fits). */
  level: number | null;
}

/**
 * The round plan's pure functions (plan.ts; perfmine_bench_interleave.py's next_round,
 * water_level, expected_round_ms): plan.ts's own examples, ties at the level (a workload whose next
 * round ends exactly at it), a budget already passed, unknown costs, and seeded random ones with
 * costs that are not whole milliseconds.
 */
export function planCases(): PlanCase[] {
  const w = (name: string, spentMs: number, rounds: number, roundsLeft: number): PlannedWorkload => ({ name, spentMs, rounds, roundsLeft });
  const cases: PlanCase[] = [
    { label: 'everything fits', workloads: [w('a', 100, 2, 18), w('b', 5000, 2, 18)], budgetLeftMs: 1e9, minRounds: 6 },
    {
      label: 'past its share, before the first look',
      workloads: [w('a', 300, 6, 14), w('b', 15_000, 6, 14)],
      budgetLeftMs: 40_000,
      minRounds: 6,
    },
    { label: 'still fits', workloads: [w('a', 350, 7, 13), w('b', 17_500, 7, 13)], budgetLeftMs: 5_000, minRounds: 6 },
    { label: 'no longer fits', workloads: [w('a', 350, 7, 13), w('b', 17_500, 7, 13)], budgetLeftMs: 1_000, minRounds: 6 },
    { label: 'no budget left, before the look', workloads: [w('a', 250, 5, 15), w('b', 12_500, 5, 15)], budgetLeftMs: 0, minRounds: 6 },
    { label: 'unknown cost', workloads: [w('a', 0, 0, 20)], budgetLeftMs: 0, minRounds: 6 },
    // a: 30 ms spent in 3 rounds, 3 left (whole 60); b: 1 ms a round (whole 6); 46 ms there: level 40 = a's next round's end
    { label: 'a tie at the level', workloads: [w('a', 30, 3, 3), w('b', 3, 3, 3)], budgetLeftMs: 13, minRounds: 0 },
    { label: 'just past the level', workloads: [w('a', 30, 3, 3), w('b', 3, 3, 3)], budgetLeftMs: 12.999, minRounds: 0 },
    { label: 'a budget already passed', workloads: [w('a', 30, 3, 3), w('b', 300, 3, 3)], budgetLeftMs: -50, minRounds: 2 },
    { label: 'no workloads', workloads: [], budgetLeftMs: 100, minRounds: 6 },
    { label: 'no rounds left', workloads: [w('a', 30, 3, 0), w('b', 300, 3, 0)], budgetLeftMs: 0, minRounds: 0 },
    { label: 'no rounds left, a budget already passed', workloads: [w('a', 30, 3, 0), w('b', 300, 3, 0)], budgetLeftMs: -50, minRounds: 0 },
    // whole costs [20, 20, 100] in 60 ms: the level is 20, a cost and a and b's next round's end
    {
      label: 'the level at a sorted cost',
      workloads: [w('a', 10, 1, 1), w('b', 10, 1, 1), w('c', 25, 1, 3)],
      budgetLeftMs: 15,
      minRounds: 0,
    },
    { label: 'everything fits exactly', workloads: [w('a', 10, 1, 1), w('b', 10, 1, 1), w('c', 10, 1, 1)], budgetLeftMs: 30, minRounds: 0 },
  ];
  const random = mulberry32(37);
  for (let k = 0; k < 300; k++) {
    const n = 1 + Math.floor(random() * 6);
    const workloads = Array.from({ length: n }, (_, i) => {
      const rounds = Math.floor(random() * 12);
      const perRound = random() < 0.3 ? 20_000 * random() : 300 * random();
      return w(
        `w${i}`,
        rounds === 0 ? 0 : Math.round(rounds * perRound * (0.8 + 0.4 * random()) * 1000) / 1000,
        rounds,
        Math.floor(random() * 20),
      );
    });
    const budgetLeftMs = random() < 0.1 ? -1000 * random() : 100_000 * random() * random();
    cases.push({ label: `random ${k}`, workloads, budgetLeftMs, minRounds: Math.floor(random() * 8) });
  }
  return cases;
}

export function planTs(c: PlanCase): PlanAnswer {
  const whole = c.workloads.map((w) => w.spentMs + (w.rounds > 0 ? w.spentMs / w.rounds : 0) * w.roundsLeft);
  // the level nextRound decides by
  const level = waterLevel(whole, c.workloads.reduce((n, w) => n + w.spentMs, 0) + Math.max(0, c.budgetLeftMs));
  return {
    next: [...nextRound(c.workloads, c.budgetLeftMs, c.minRounds)].sort(),
    expected: expectedRoundMs(c.workloads),
    level: level === Infinity ? null : level,
  };
}

// ---------------------------------------------------------------- the protected paths

export interface ProtectedCase {
  readonly label: string;
  readonly configPath: string;
  /** The asv config's text (its benchmark_dir, or none: asv's default `benchmarks`). */
  readonly configText: string;
  readonly paths: string[];
}

/** Paths near every rule's edge: benchmark directories, tests by name and by folder, pytest's config, the asv config. */
const PATHS: readonly string[] = [
  'pkg/core.py',
  'pkg/__init__.py',
  'setup.py',
  'README.md',
  'benchmarks/bench_core.py',
  'benchmarks/__init__.py',
  'benchmarks.py',
  'benchmarks_old/x.py',
  'my_benchmarks/x.py',
  'pkg/benchmarks/x.py',
  'asv_bench/benchmarks/bench.py',
  'asv_bench/benchmarks_extra/bench.py',
  'asv_bench/asv.conf.json',
  'asv_bench/README.md',
  'asv_bench/env.py',
  'bench/a.py',
  'bench[1]/a.py',
  'tests/test_core.py',
  'tests/helpers.py',
  'tests/data/input.csv',
  'test/helpers.py',
  'pkg/tests/helpers.py',
  'pkg/test/deep/er/x.txt',
  'pkg/testing/helpers.py',
  'pkg/my_tests/x.py',
  'pkg/tests_old/x.py',
  'Tests/x.py',
  'TEST/x.py',
  'test_core.py',
  'pkg/test_core.py',
  'pkg/test_.py',
  'pkg/core_test.py',
  'pkg/_test.py',
  'pkg/test.py',
  'pkg/testcore.py',
  'pkg/test_core.pyx',
  'pkg/test_core.py.orig',
  'pkg/Test_core.py',
  'pkg/core_TEST.py',
  'conftest.py',
  'pkg/conftest.py',
  'pkg/myconftest.py',
  'pkg/conftest.pyi',
  'pytest.ini',
  '.pytest.ini',
  'tox.ini',
  'pkg/pytest.ini',
  'pkg/tox.ini',
  'setup.cfg',
  'pyproject.toml',
  'asv.conf.json',
  'asv.conf.jsonc',
  'pkg/asv.conf.json',
  'a b/test_c.py',
  'a b/c.py',
  'ünï/tests/x.py',
  'ünï/x.py',
  'docs/conf.py',
  'pkg/sub/deep/module.py',
];

const config = (benchmarkDir: string | null) =>
  `{\n  // asv's config\n  "version": 1,\n  "project": "p",\n  "repo": ".",${benchmarkDir === null ? '' : `\n  "benchmark_dir": ${JSON.stringify(benchmarkDir)},`}\n}\n`;

/** The layouts: asv's default, the forms a benchmark_dir is written in, a config in a subfolder, the checkout itself, outside it. */
export function protectedCases(): ProtectedCase[] {
  const at = (label: string, configPath: string, benchmarkDir: string | null): ProtectedCase => ({
    label,
    configPath,
    configText: config(benchmarkDir),
    paths: [configPath, ...PATHS.filter((p) => p !== configPath && !(configPath.startsWith(`${p}/`) || p.startsWith(`${configPath}/`)))],
  });
  return [
    at("asv's default benchmark_dir", 'asv.conf.json', null),
    at('benchmark_dir "benchmarks"', 'asv.conf.json', 'benchmarks'),
    at('benchmark_dir "./benchmarks/"', 'asv.conf.json', './benchmarks/'),
    at('benchmark_dir "benchmarks/"', 'asv.conf.json', 'benchmarks/'),
    at('benchmark_dir "bench[1]"', 'asv.conf.json', 'bench[1]'),
    at('benchmark_dir "pkg/benchmarks"', 'asv.conf.json', 'pkg/benchmarks'),
    at('a .jsonc config', 'asv.conf.jsonc', 'bench'),
    at('a config in a subfolder, its default', 'asv_bench/asv.conf.json', null),
    at('a config in a subfolder, "benchmarks"', 'asv_bench/asv.conf.json', 'benchmarks'),
    at('a config in a subfolder, "../benchmarks"', 'asv_bench/asv.conf.json', '../benchmarks'),
    at('a config in a subfolder, "."', 'asv_bench/asv.conf.json', '.'),
    at('a config in a subfolder, "./sub/../benchmarks"', 'asv_bench/asv.conf.json', './sub/../benchmarks'),
    at('benchmark_dir "." (the checkout)', 'asv.conf.json', '.'),
    at('benchmark_dir "" (the checkout)', 'asv.conf.json', ''),
    at('benchmark_dir outside the checkout', 'asv.conf.json', '../elsewhere'),
    at('a config two folders down, "../../benchmarks"', 'pkg/sub/asv.conf.json', '../../benchmarks'),
  ];
}

/** The case's paths validate keeps from the base (the layout as validate makes it). */
export function protectedTs(c: ProtectedCase): string[] {
  const benchmarkDir = benchmarkDirOf(c.configPath, c.configText);
  return c.paths.filter((p) => isProtectedPath(p, { configPath: c.configPath, benchmarkDir }));
}
