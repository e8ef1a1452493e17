import { z } from 'zod';
import { pairedOptionsSchema } from './paired/options.js';

const positiveInt = z.number().int().positive();
const repoName = z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'expected owner/name');

/** Configuration of the validate stage (the `validate` key of perfmine.config.json). */
/** perfmine's interleaved harness (`validate.engine: perfmine`). */
export const harnessConfig = z
  .object({
    /** Rounds per workload: each round is one sample batch of every side, in a random order (the pairs of the verdict). */
    rounds: z.number().int().min(3).max(1000).default(20),
    /**
     * Rounds one worker process measures before all are replaced by fresh ones (1: a fresh
     * process per round). Two processes of identical code can differ consistently by several
     * percent on a benchmark (memory layout; up to 10% seen on a 10 µs workload here): fresh
     * processes turn that into noise the verdict measures. More rounds per process cost fewer
     * restarts; their rounds are then pooled into one pair.
     */
    roundsPerProcess: positiveInt.max(1000).default(1),
    /** Samples per batch (each about the benchmark's sample_time); the batch's median is the round's value. */
    samples: positiveInt.max(100).default(5),
    /**
     * `alternate`: the sides take turns on one core, batch by batch (measured here to give the
     * lower noise, see docs/validate.md); `duet`: base and expert run at the same time on two cores.
     */
    mode: z.enum(['alternate', 'duet']).default('alternate'),
    /**
     * Mode `alternate`: what the sides take turns by. `sample`: one sample each, in a new random
     * order every turn, so that the machine's speed changes of a fraction of a second (seen here:
     * 1.4-1.7x for 0.1-3 s on a shared VM) fall on every side alike; `batch`: a side's whole
     * batch, then the next side's (validate's protocol before this setting existed, and perfmine-bench's verifier, whose
     * outside CPU counts need batches long enough to resolve).
     */
    interleave: z.enum(['sample', 'batch']).default('sample'),
    /**
     * How the time budget is spent: `cost`, each round measures the workloads whose share of the
     * budget (by what each has cost so far) allows another round, every one at least
     * `paired.minPairs` rounds (enough for a verdict), so that one expensive workload does not
     * take the pairs of the cheap ones; `even`, every workload takes every round until the next round would pass the budget.
     */
    plan: z.enum(['cost', 'even']).default('cost'),
    /**
     * The rounds the calibration worker (the second base) takes part in; null: every round. Its
     * base/base pairs give the bias allowance, the measured false-positive rate and part of each
     * workload's noise estimate; past the first 10 rounds the workloads still measured are the
     * close calls, whose own base/expert pairs carry their noise estimate, and a calibration side
     * in each of their rounds is a third of the round's time.
     */
    calibrationRounds: z.number().int().min(3).max(1000).nullable().default(10),
    /**
     * Sample by sample: `by-setup`, a workload whose setup (rerun before every sample, as asv
     * does) outweighs its sample takes fewer samples a round (at least one) so that a round costs
     * about what its samples would without setup, and the time goes to more rounds; `fixed`:
     * `samples` every round.
     */
    samplesPerRound: z.enum(['by-setup', 'fixed']).default('by-setup'),
    /**
     * What a sample's time is: `cpu`, the worker process's CPU time (time.process_time), which
     * time spent preempted by other processes on a shared machine does not inflate; `wall`, the
     * wall clock (asv's default timer). A benchmark's own `timer` attribute is kept either way.
     */
    clock: z.enum(['cpu', 'wall']).default('cpu'),
    /**
     * CPUs the workers are pinned to (a cpuset list such as "1" or "2,3"); `auto`: the last core
     * for `alternate`, the last two for `duet`, nothing on a one-core machine; `none`: no pinning.
     */
    cpus: z.union([z.enum(['auto', 'none']), z.string().regex(/^\d+(-\d+)?(,\d+(-\d+)?)*$/)]).default('auto'),
    /** Warm-up seconds before each batch after the first (the first of each worker and workload warms up as asv does): two samples' worth by default. */
    warmupSeconds: z.number().min(0).max(60).default(0.02),
    /** A batch's time limit in seconds (null: the benchmark's own `timeout`, asv's 60 s by default). */
    batchTimeoutSeconds: positiveInt.nullable().default(null),
    /** PYTHONHASHSEED of every worker: the same string hashing on both sides. */
    hashSeed: z
      .string()
      .regex(/^(random|\d+)$/)
      .default('0'),
    /** Seed of the random orders (null: a fresh one per candidate, recorded with the measurement). */
    seed: z.number().int().nonnegative().nullable().default(null),
    /**
     * Adaptive sampling: after each of these rounds, workloads whose verdict is settled are
     * measured no further (stages/validate/paired/sequential.ts). [] measures every workload
     * for every round; looks at or after `rounds` are not made.
     */
    adaptive: z
      .object({
        looks: z.array(z.number().int().min(3)).default([6, 10, 15]),
        /** The share of paired.alpha spent over the interim looks; the final analysis keeps the rest. */
        earlyAlphaShare: z.number().gt(0).lt(1).default(0.15),
        /** The per-look chance of stopping, as unchanged, a workload whose effect is beyond the floor. */
        futility: z.number().gt(0).lt(0.1).default(0.001),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .refine((h) => h.adaptive.looks.every((l, i, all) => i === 0 || l > all[i - 1]!), {
    message: 'adaptive.looks must be ascending',
    path: ['adaptive', 'looks'],
  })
  // a look at or after the last round would be the final analysis: only earlier ones are made
  // (and share the early alpha), so a short protocol (rounds: 5) needs no looks of its own
  .transform((h) => ({ ...h, adaptive: { ...h.adaptive, looks: h.adaptive.looks.filter((l) => l < h.rounds) } }));

/**
 * A candidate's measurement time by engine. perfmine's harness: 10 minutes, planned by cost (a
 * real candidate decided within 10 minutes of measuring is issue 37's target; param #1122 took
 * 3 minutes whole); asv's whole-suite invocations: 4 hours.
 */
export const DEFAULT_TIME_BUDGET_SECONDS: Readonly<Record<'perfmine' | 'asv', number>> = { perfmine: 600, asv: 4 * 3600 };

export const validateConfig = z
  .object({
    /**
     * How workloads are measured: `perfmine`, the project's own harness (only the image's
     * Python, interleaved warm workers); `asv`, the real asv in the image (whole invocations
     * alternating A B B A).
     */
    engine: z.enum(['perfmine', 'asv']).default('perfmine'),
    /** The harness's protocol (engine perfmine). */
    harness: harnessConfig.prefault({}),
    /**
     * Which workloads the harness measures: `coverage`, only those whose code (recorded once per
     * workload at the base commit) the expert patch changes, plus `selectionControls` untouched
     * ones; `all`, every one. Patches that change module-level code, compiled sources or build
     * files measure all either way.
     */
    selection: z.enum(['coverage', 'all']).default('coverage'),
    selectionControls: z.number().int().nonnegative().max(100).default(5),
    /** Base/expert invocation pairs per candidate, measured A B B A … (engine asv) */
    pairs: positiveInt.default(4),
    /** Base/base calibration pairs, interleaved with the A/B pairs (engine asv; at least paired.minCalibrationPairs for a calibrated verdict). */
    calibrationPairs: z.number().int().nonnegative().default(3),
    /** The machine name asv files results under (`asv machine --yes --machine NAME`). */
    machine: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+$/)
      .default('perfmine'),
    /** `asv run --bench REGEX`: which benchmarks to measure (null: all). */
    bench: z.string().min(1).nullable().default(null),
    /** `-a rounds=N` per invocation. */
    rounds: positiveInt.default(2),
    /** More `-a key=value` benchmark attribute overrides (repeat, number, warmup_time, timeout ...). */
    attributes: z
      .partialRecord(z.enum(['timeout', 'warmup_time', 'repeat', 'number', 'sample_time']), z.union([z.string(), z.number()]))
      .default({}),
    /** `asv run --cpu-affinity LIST` (e.g. "1" or "0-1"); null: unset. */
    cpuAffinity: z
      .string()
      .regex(/^\d+(-\d+)?(,\d+(-\d+)?)*$/)
      .nullable()
      .default(null),
    /** Environment of every measurement, test and snapshot container (threads pinned to one). */
    env: z.record(z.string().regex(/^[A-Z_][A-Z0-9_]*$/), z.string()).default({
      OMP_NUM_THREADS: '1',
      MKL_NUM_THREADS: '1',
      OPENBLAS_NUM_THREADS: '1',
      NUMEXPR_NUM_THREADS: '1',
      VECLIB_MAXIMUM_THREADS: '1',
    }),
    /** Repositories whose suites may use the network while measured (some download data at import). */
    networkRepos: z.array(repoName).default([]),
    /** The Python that runs pytest and the snapshot helper in the image (null: the `pythonX.Y` synthesize chose). */
    python: z.string().min(1).nullable().default(null),
    /** Time limit of one asv invocation (its container is killed after it). */
    invocationTimeoutSeconds: positiveInt.default(1800),
    /**
     * Measurement time per candidate (null: the engine's default, DEFAULT_TIME_BUDGET_SECONDS).
     * Engine perfmine: from the choice of workloads; the rounds are planned by each workload's cost
     * within it (`harness.plan`). Engine asv: no new pair starts once the invocations so far plus
     * one more pair would pass it.
     */
    timeBudgetSeconds: positiveInt.nullable().default(null),
    /** Time limit of each pytest run (base and expert). */
    testTimeoutSeconds: positiveInt.default(1800),
    /** Extra pytest arguments (paths, -k, -m). */
    pytestArgs: z.array(z.string()).default([]),
    /** Time limit of the snapshot helper, and of each benchmark call in it. */
    snapshotTimeoutSeconds: positiveInt.default(900),
    snapshotCallSeconds: positiveInt.default(60),
    /** Time limit of the expert image's build step (checkout + patch + build script); verification has synthesize's limits. */
    buildTimeoutSeconds: positiveInt.default(3600),
    /** Keep each candidate's expert image after validation (default: removed; emit rebuilds from the base image). */
    keepExpertImages: z.boolean().default(false),
    /** asv's factor for its own verdict (asv compare's default 1.1). */
    factor: z.number().gt(1).default(1.1),
    /** perfmine's paired keep verdict. */
    paired: pairedOptionsSchema.prefault({}),
  })
  .strict()
  .transform((v) => ({ ...v, timeBudgetSeconds: v.timeBudgetSeconds ?? DEFAULT_TIME_BUDGET_SECONDS[v.engine] }));

export type ValidateConfig = z.infer<typeof validateConfig>;

export type HarnessConfig = z.infer<typeof harnessConfig>;
