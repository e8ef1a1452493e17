import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { humanFileSize, humanFloat, humanTime, humanValue } from '../../pipeline/concepts/asv/human-value.js';
import { isProtectedPath } from '../../pipeline/concepts/measured-patch.js';
import { packagePath } from '../../pipeline/package-root.js';
import { mulberry32 } from '../../pipeline/random.js';
import { benchmarkDirOf } from '../../pipeline/services/environments/verification.js';
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

export type Kind = 'format' | 'interleave' | 'protected';

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
  };
  readonly workloads: string[];
  /** Workloads a side's worker does not have. */
  readonly missing: Partial<Record<Side, string[]>>;
  /** Sides whose worker cannot import the suite. */
  readonly fatal: Side[];
  /** A side's batch of a workload that fails: in the warm-up (round null) or in a round. */
  readonly failures: { side: Side; workload: string; round: number | null; status: 'failed' | 'timeout' | 'crashed' | 'skipped' }[];
  /** A side's k-th restart (1-based) that cannot start a worker. */
  readonly restartFailures: { side: Side; restart: number }[];
  /** After round N (a look), the workloads settled and as what. */
  readonly settle: Record<string, Record<string, Settlement>>;
  /** What the scripted clock moves by a batch. */
  readonly secondsPerBatch: number;
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
  asked: Partial<Record<Side, Omit<BatchCommand, 'id' | 'op'>[]>>;
  workloads: {
    name: string;
    base: SideAnswer;
    expert: SideAnswer;
    calibration: SideAnswer | null;
    settled: { round: number; as: Settlement } | null;
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
  return cases;
}

/** The TypeScript driver's answer to a case, with workers and a clock scripted as the Python driver's. */
export async function interleaveTs(c: InterleaveCase): Promise<InterleaveAnswer> {
  let clock = 0;
  const asked: Partial<Record<Side, Omit<BatchCommand, 'id' | 'op'>[]>> = {};
  const restarts: Partial<Record<Side, number>> = {};
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
        clock += c.secondsPerBatch * 1000;
        const name = command.benchmark.slice('bench.'.length);
        // the warm-up batch (no warm-up seconds given), then one batch a round while the side measures it
        const warmup = command.warmup === null;
        const seen = mine.filter((x) => x.benchmark === command.benchmark).length - 2;
        const failure = c.failures.find((f) => f.side === side && f.workload === name && f.round === (warmup ? null : seen));
        if (failure) return Promise.resolve({ ok: false, status: failure.status, message: 'scripted' });
        const value = 0.001 * (1 + c.workloads.indexOf(name)) * (side === 'expert' ? 2 : 1);
        return Promise.resolve({
          ok: true,
          samples: Array.from({ length: command.samples }, (_, i) => value + 0.0001 * i),
          number: command.number || 7,
        });
      },
      restart: () => {
        const k = (restarts[side] = (restarts[side] ?? 0) + 1);
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
    now: () => clock,
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
    asked,
    workloads: m.workloads.map((w) => ({
      name: w.ref.name,
      base: side(w.base),
      expert: side(w.expert),
      calibration: w.calibration === null ? null : side(w.calibration),
      settled: w.settled,
    })),
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
