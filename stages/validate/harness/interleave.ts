import { mulberry32, shuffled } from '../../../pipeline/random.js';
import {
  addSideAccounts,
  emptySideAccount,
  type MeasurementAccount,
  type SideAccount,
} from '../../../pipeline/concepts/measurement-account.js';
import type { Settlement } from '../paired/sequential.js';
import { batchShare, measurementAccount } from './account.js';
import { median } from '../paired/stats.js';
import { expectedRoundMs, nextRound, samplesForSetup } from './plan.js';
import type {
  BatchCommand,
  BatchResult,
  FailureStatus,
  FatalMessage,
  FingerprintResult,
  OutlineResult,
  ReadyMessage,
  RestartResult,
  WorkloadRef,
} from './messages.js';

/**
 * perfmine's interleaved measurement: base, expert and (for calibration) a second base run as warm
 * worker processes, and the driver alternates them sample batch by sample batch in a randomized
 * order, so that the machine's slow and fast phases fall on every side alike (randomized multiple
 * interleaved trials, Abedi & Brecht 2017). Round-major: each round visits every workload still
 * measured, in a random order, and for each runs one batch per side in a random order (mode
 * `alternate`), or the base beside the expert and the base beside the calibration worker at the
 * same time on different cores (mode `duet`, Bulej et al. 2020), the two steps in a random order.
 *
 * Before the rounds, a warm-up pass per workload: the base calibrates asv's `number` (calls per
 * sample, so that a sample lasts about sample_time) and warms up; the other sides warm up with
 * that number; every later batch of every side uses it. The warm-up batches are not evidence.
 *
 * A workload that fails on the base (raises, times out, crashes the worker, is skipped) is
 * measured no further; one that fails on the expert too; a calibration failure only ends its
 * calibration. No round starts once the rounds so far plus one more would pass the time budget,
 * which counts from the choice of workloads: the fingerprint pass before it measures nothing (a
 * large suite's first pass took 1,020 s of xarray's 1,200 s, and one round was measured).
 * The workers are a port (HarnessWorker): Docker containers in production, scripted in tests.
 */

export type Side = 'base' | 'expert' | 'calibration';

/** How many of rounds [from, to) start with fresh worker processes (every `roundsPerProcess`-th but the first). */
export function restartsFrom(from: number, to: number, roundsPerProcess: number): number {
  const upTo = (n: number) => (n <= 0 ? 0 : Math.floor((n - 1) / roundsPerProcess)); // restarts in rounds 1..n-1
  return Math.max(0, upTo(to) - upTo(Math.max(from, 1)));
}
export const SIDE_LETTER: Readonly<Record<Side, string>> = { base: 'A', expert: 'B', calibration: 'C' };

export interface HarnessWorker {
  /** The worker's first line: its suite, or why it could not load it. */
  readonly start: ReadyMessage | FatalMessage;
  batch(command: Omit<BatchCommand, 'id' | 'op'>, signal?: AbortSignal): Promise<BatchResult>;
  /**
   * Replaces the worker process by a fresh one (a new memory layout; the suite imported again).
   * With `benchmarks`, the fresh process (and every later one) imports only their modules and
   * serves only them.
   */
  restart(signal?: AbortSignal, benchmarks?: readonly string[]): Promise<RestartResult>;
  /** What one call of a workload runs (code objects), for workload selection. */
  fingerprint(ref: WorkloadRef, timeoutSeconds: number | null, signal?: AbortSignal): Promise<FingerprintResult>;
  /** The def and class statements of files in the container (null: the harness could not answer). */
  outline(files: readonly string[], signal?: AbortSignal): Promise<OutlineResult | null>;
  /** The files of every module the suite's import loaded (null: the harness could not answer). */
  modules(signal?: AbortSignal): Promise<readonly string[] | null>;
  /** The tail of what the worker wrote to stderr (benchmarks' output, tracebacks). */
  log(): string;
  close(): Promise<void>;
}

export interface HarnessWorkers {
  open(side: Side, signal?: AbortSignal): Promise<HarnessWorker>;
}

export interface InterleaveSettings {
  /** Rounds of batches (pairs of evidence per workload). */
  readonly rounds: number;
  /**
   * Rounds measured by one worker process before every worker is replaced by a fresh one. Two
   * processes of identical code can differ consistently by several percent on a benchmark
   * (memory layout); a fresh process per round turns that into round-to-round noise, which the
   * verdict measures, instead of a bias it cannot see. With more than one round per process the
   * rounds of a process are pooled into one pair.
   */
  readonly roundsPerProcess: number;
  /** Samples per batch; the batch's median is the round's value. */
  readonly samples: number;
  readonly mode: 'alternate' | 'duet';
  /** Measure a second base worker too (base/base calibration). */
  readonly calibration: boolean;
  /**
   * The rounds the calibration worker takes part in (absent: every round): after them it is
   * closed and the rounds measure base and expert only. Its pairs give the verdict the bias
   * allowance, the false-positive rate and a share of each workload's noise estimate; a workload
   * measured past them has that many base/base pairs beside its own base/expert ones.
   */
  readonly calibrationRounds?: number;
  /** Seed of the random orders (recorded with the measurement). */
  readonly seed: number;
  /** No round starts once the time since the workloads were chosen plus one more round would pass it. */
  readonly budgetMs: number;
  /** A batch's time limit in seconds (null: the benchmark's own `timeout`). */
  readonly batchTimeoutSeconds: number | null;
  /** What a sample's time is: the wall clock (asv's default timer) or the worker's CPU time. */
  readonly clock: 'wall' | 'cpu';
  /** Warm-up seconds before each batch after the warm-up pass (0: none; the batch median absorbs a cold first sample). */
  readonly warmupSeconds: number;
  /**
   * Mode `alternate`: what the sides take turns by. `batch` (absent: batch): one side's batch of
   * `samples` samples, then the next side's. `sample`: a round's batches are split into one-sample
   * batches and the sides take turns sample by sample (each turn in a new random order; the warm-up
   * before the first only), so that a change of the machine's speed lasting a fraction of a second
   * falls on every side alike instead of on one side's whole batch. A single-value benchmark
   * (mem, peakmem, track) answers one value a batch and keeps batch turns.
   */
  readonly interleave?: 'batch' | 'sample';
  /**
   * How the time budget is spent (./plan.ts). `cost` (absent: even): each round measures the
   * workloads whose share of the budget, by what each has cost so far, allows another round
   * (every one at least `minRounds` rounds); the measurement stops when the next round of those
   * would pass the budget. `even`: every workload still measured takes every round, and
   * no round starts once the rounds so far plus one more would pass it.
   */
  readonly plan?: 'cost' | 'even';
  /**
   * Sample by sample: how many turns a round of a workload takes. `by-setup`: `samples` while its
   * setup (run before every sample, as asv does) is cheap, fewer as setup outweighs a sample
   * (./plan.ts samplesForSetup), decided from the base's turns of its first round; `fixed` (absent
   * too): `samples`.
   */
  readonly samplesPerRound?: 'by-setup' | 'fixed';
  /**
   * Plan `cost`: the rounds every workload takes before the plan may leave it out (absent: the
   * first interim look, else 6); validate gives the verdict's minPairs, so that a budget too
   * small for every workload's first look still gives each a verdict and the cheap ones more.
   */
  readonly minRounds?: number;
  /** Wall clock in ms (tests pass a fake one). */
  readonly now?: () => number;
  /** The account's clock: monotonic, in ms (default performance.now; tests pass a fake one). */
  readonly monotonic?: () => number;
  /** Called after each round (progress). */
  readonly onRound?: (round: number, elapsedMs: number, measuring: number) => void;
  /**
   * Adaptive sampling: after each of these rounds, `settle` is asked which workloads are settled
   * (measured no further); the others go on.
   */
  readonly looks?: readonly number[];
  readonly settle?: (measurement: InterleavedMeasurement) => ReadonlyMap<string, Settlement>;
  /**
   * Workload selection: once the base worker is ready, which of its workloads to measure (null:
   * all). The others are not measured at all.
   */
  readonly choose?: (base: HarnessWorker, ready: ReadyMessage, signal?: AbortSignal) => Promise<ReadonlySet<string> | null>;
}

/** The harness options a measurement's settings are made of (validate's `harness` config). */
export type HarnessOptions = Pick<
  InterleaveSettings,
  'rounds' | 'roundsPerProcess' | 'samples' | 'mode' | 'batchTimeoutSeconds' | 'clock' | 'warmupSeconds'
> &
  Required<Pick<InterleaveSettings, 'interleave' | 'plan' | 'samplesPerRound'>> & { readonly calibrationRounds: number | null };

/** The settings of one measurement with calibration, from the harness options, its seed and its time budget. */
export function calibratedSettings(h: HarnessOptions, seed: number, budgetMs: number): InterleaveSettings {
  return {
    rounds: h.rounds,
    roundsPerProcess: h.roundsPerProcess,
    samples: h.samples,
    clock: h.clock,
    mode: h.mode,
    calibration: true,
    seed,
    budgetMs,
    batchTimeoutSeconds: h.batchTimeoutSeconds,
    warmupSeconds: h.warmupSeconds,
    interleave: h.interleave,
    plan: h.plan,
    samplesPerRound: h.samplesPerRound,
    calibrationRounds: h.calibrationRounds ?? h.rounds,
  };
}

export interface SideFailure {
  readonly status: FailureStatus | 'missing';
  readonly message: string;
  /** The round it happened in; null in the warm-up pass. */
  readonly round: number | null;
}

export interface SideRecord {
  /** Calls per sample (null for single-value benchmarks: mem, peakmem, track). */
  number: number | null;
  /** Per round: the batch's samples, null where no batch ran or it failed. */
  readonly rounds: (readonly number[] | null)[];
  failure: SideFailure | null;
  /** Where its batches' time went (the warm-up pass's batch included); absent from records made elsewhere. */
  account?: SideAccount;
}

export interface WorkloadRecord {
  readonly ref: WorkloadRef;
  readonly base: SideRecord;
  readonly expert: SideRecord;
  readonly calibration: SideRecord | null;
  /**
   * Per round, the base batch the calibration batch is paired with: in `duet` mode the one that
   * ran beside it (the base runs twice a round); null in `alternate` mode, where it is the
   * round's base batch.
   */
  readonly calibrationBase: (readonly number[] | null)[] | null;
  /** Settled at an interim look (adaptive sampling): measured no further. */
  settled: { readonly round: number; readonly as: Settlement } | null;
  /** Rounds the time plan left it out of (its share of the budget spent); absent: none. */
  leftOut?: number;
  /** Samples a round from its second round on, when its setup made them fewer than the protocol's (samplesPerRound by-setup); absent: the protocol's. */
  samples?: number;
}

export interface InterleavedMeasurement {
  readonly base: ReadyMessage | FatalMessage;
  readonly expert: ReadyMessage | FatalMessage | null;
  readonly calibration: ReadyMessage | FatalMessage | null;
  readonly workloads: readonly WorkloadRecord[];
  /** Rounds run (every workload still measured got a batch of each side in each). */
  readonly rounds: number;
  /** Rounds per worker process (the rounds of one process form one pair of evidence). */
  readonly roundsPerProcess: number;
  /** The rounds the calibration worker took part in at most (absent: every round). */
  readonly calibrationRounds?: number;
  /** Per round, the order batches ran in: `workload-index:letters`, e.g. `3:BAC` (duet: `3:AB|AC`; sample by sample: `3:BAC/CAB/...`, a turn each). */
  readonly order: readonly string[];
  readonly batches: number;
  readonly durationMs: number;
  readonly budgetExhausted: boolean;
  /** The tails of the workers' stderr, by side. */
  readonly logs: Readonly<Partial<Record<Side, string>>>;
  /** Where the measurement's wall time went (./account.ts); absent from measurements made elsewhere. */
  readonly account?: MeasurementAccount;
}

const emptySide = (rounds: number): SideRecord => ({
  number: null,
  rounds: Array.from({ length: rounds }, () => null),
  failure: null,
  account: emptySideAccount(),
});

function active(w: WorkloadRecord): boolean {
  return w.base.failure === null && w.expert.failure === null && w.settled === null;
}

/**
 * The benchmarks a side may still run: those of workloads still measured on both sides and not
 * failed on this one (a settled or failed workload is never measured again).
 */
export function stillMeasured(records: readonly WorkloadRecord[], side: Side): string[] {
  const names = new Set<string>();
  for (const w of records) {
    const own = side === 'calibration' ? w.calibration : w[side];
    if (active(w) && own && own.failure === null) names.add(w.ref.benchmark);
  }
  return [...names].sort();
}

function sidesOf(w: WorkloadRecord, calibrating = true): Side[] {
  return calibrating && w.calibration && w.calibration.failure === null ? ['base', 'expert', 'calibration'] : ['base', 'expert'];
}

export async function measureInterleaved(
  workers: HarnessWorkers,
  settings: InterleaveSettings,
  signal?: AbortSignal,
): Promise<InterleavedMeasurement> {
  const now = settings.now ?? Date.now;
  const started = now();
  // the account: what the driver times on its monotonic clock (the harness times inside a batch)
  const monotonic = settings.monotonic ?? (() => performance.now());
  const startedMono = monotonic();
  const times = { workersMs: 0, workerStarts: 0, importMs: 0, selectionMs: 0, sideBySideMs: 0 };
  const accountOf = (records: readonly WorkloadRecord[]): MeasurementAccount =>
    measurementAccount(
      records.map((w) => ({
        name: w.ref.name,
        sides: { base: w.base.account, expert: w.expert.account, calibration: w.calibration?.account },
      })),
      { ...times, wallMs: monotonic() - startedMono },
    );
  const opened = async (side: Side): Promise<HarnessWorker> => {
    const from = monotonic();
    try {
      const w = await workers.open(side, signal);
      if (w.start.event === 'ready' && w.start.import_seconds !== undefined) times.importMs += w.start.import_seconds * 1000;
      return w;
    } finally {
      times.workersMs += monotonic() - from;
      times.workerStarts += 1;
    }
  };
  const random = mulberry32(settings.seed);
  const open: Partial<Record<Side, HarnessWorker>> = {};
  // the stderr tails of workers closed before the end (the calibration worker after its rounds)
  const closedLogs: Partial<Record<Side, string>> = {};
  const logs = () =>
    ({ ...closedLogs, ...Object.fromEntries(Object.entries(open).map(([side, w]) => [side, w.log()])) }) as Partial<Record<Side, string>>;
  let batches = 0;
  const order: string[] = [];
  try {
    const base = (open.base = await opened('base'));
    const none = (expert: ReadyMessage | FatalMessage | null, calibration: ReadyMessage | FatalMessage | null): InterleavedMeasurement => ({
      base: base.start,
      expert,
      calibration,
      workloads: [],
      rounds: 0,
      order,
      batches,
      durationMs: now() - started,
      budgetExhausted: false,
      roundsPerProcess: settings.roundsPerProcess,
      logs: logs(),
      account: accountOf([]),
    });
    if (base.start.event !== 'ready') return none(null, null);
    let chosen: ReadonlySet<string> | null = null;
    if (settings.choose) {
      const choosing = monotonic();
      chosen = await settings.choose(base, base.start, signal);
      times.selectionMs += monotonic() - choosing;
    }
    const chosenAt = now();
    // nothing chosen (a patch that changes no code any workload runs): nothing to measure
    if (chosen !== null && chosen.size === 0) return none(null, null);
    const expert = (open.expert = await opened('expert'));
    if (expert.start.event !== 'ready') return none(expert.start, null);
    const calibration = settings.calibration ? (open.calibration = await opened('calibration')) : null;
    const worker: Record<Side, HarnessWorker | null> = {
      base,
      expert,
      calibration: calibration?.start.event === 'ready' ? calibration : null,
    };

    const expertNames = new Set(expert.start.workloads.map((w) => w.name));
    const records: WorkloadRecord[] = base.start.workloads
      .filter((ref) => chosen === null || chosen.has(ref.name))
      .map((ref) => ({
        ref,
        base: emptySide(settings.rounds),
        expert: emptySide(settings.rounds),
        calibration: worker.calibration ? emptySide(settings.rounds) : null,
        calibrationBase: worker.calibration && settings.mode === 'duet' ? Array.from({ length: settings.rounds }, () => null) : null,
        settled: null,
      }));
    const expertRef = new Map(expert.start.workloads.map((w) => [w.name, w]));
    const refOf = (w: WorkloadRecord, side: Side) => (side === 'expert' ? expertRef.get(w.ref.name)! : w.ref);
    const record = (w: WorkloadRecord, side: Side) => (side === 'base' ? w.base : side === 'expert' ? w.expert : w.calibration!);

    /** The harness's account of the last batch run (what a turn's setup and sample took). */
    let lastAccount: BatchResult['account'];
    /**
     * One batch of a side; its samples go to the side's round (or `into`, for duet's second base
     * batch), its time to the side's account. Returns its wall time (ms).
     */
    const run = async (
      w: WorkloadRecord,
      side: Side,
      round: number | null,
      into?: (readonly number[] | null)[],
      turn?: { readonly first: boolean },
    ): Promise<number> => {
      signal?.throwIfAborted();
      const rec = record(w, side);
      const ref = refOf(w, side);
      const from = monotonic();
      const result = await worker[side]!.batch(
        {
          benchmark: ref.benchmark,
          param: ref.param,
          samples: round === null || turn ? 1 : settings.samples,
          number: rec.number ?? w.base.number ?? 0,
          warmup: round === null ? null : turn && !turn.first ? 0 : settings.warmupSeconds,
          sample_time: null,
          timeout: settings.batchTimeoutSeconds,
          clock: settings.clock,
        },
        signal,
      );
      const wallMs = monotonic() - from;
      lastAccount = result.ok ? result.account : undefined;
      rec.account = addSideAccounts(
        rec.account ?? emptySideAccount(),
        batchShare(result.account, wallMs, { warmUpPass: round === null, failed: !result.ok }),
      );
      batches += 1;
      if (!result.ok) {
        rec.failure = { status: result.status, message: result.message, round };
        // a round a side did not finish is no evidence (the samples of its earlier turns go)
        if (round !== null && turn) (into ?? rec.rounds)[round] = null;
        return wallMs;
      }
      if (round === null) rec.number = result.number;
      else {
        const target = into ?? rec.rounds;
        // one-sample turns add up to the round's batch
        target[round] = turn && !turn.first ? [...(target[round] ?? []), ...result.samples] : result.samples;
      }
      return wallMs;
    };

    // warm-up pass: the base calibrates `number`, the others warm up with it
    for (const w of records) {
      await run(w, 'base', null);
      if (w.base.failure) continue;
      if (!expertNames.has(w.ref.name)) {
        w.expert.failure = { status: 'missing', message: 'the expert has no such workload', round: null };
        continue;
      }
      await run(w, 'expert', null);
      if (w.calibration && w.expert.failure === null) await run(w, 'calibration', null);
    }

    let rounds = 0;
    let budgetExhausted = false;
    const result = (done: number, exhausted: boolean): InterleavedMeasurement => ({
      base: base.start,
      expert: expert.start,
      calibration: calibration?.start ?? null,
      workloads: records,
      rounds: done,
      roundsPerProcess: settings.roundsPerProcess,
      order,
      batches,
      durationMs: now() - started,
      budgetExhausted: exhausted,
      logs: logs(),
      account: accountOf(records),
      ...(settings.calibrationRounds !== undefined ? { calibrationRounds: settings.calibrationRounds } : {}),
    });
    // what each workload's rounds cost (every side's batches, ms), for the round plan
    const spent = new Map<WorkloadRecord, { ms: number; rounds: number }>(records.map((w) => [w, { ms: 0, rounds: 0 }]));
    const minRounds = Math.min(settings.rounds, settings.minRounds ?? settings.looks?.[0] ?? 6);
    // what the fresh worker processes between rounds cost (ms), reserved for the rounds ahead
    const restarts = { ms: 0, times: 0 };
    for (let r = 0; r < settings.rounds; r++) {
      let measuring = records.filter(active);
      if (measuring.length === 0) break;
      const elapsed = now() - chosenAt;
      if (settings.plan === 'cost') {
        const planned = measuring.map((w) => ({
          name: w.ref.name,
          spentMs: spent.get(w)!.ms,
          rounds: spent.get(w)!.rounds,
          roundsLeft: settings.rounds - r,
        }));
        const restartMs = restarts.times > 0 ? restarts.ms / restarts.times : 0;
        const next = nextRound(
          planned,
          settings.budgetMs - elapsed - restartMs * restartsFrom(r, settings.rounds, settings.roundsPerProcess),
          minRounds,
        );
        const expected =
          expectedRoundMs(planned.filter((w) => next.has(w.name))) + restartMs * restartsFrom(r, r + 1, settings.roundsPerProcess);
        if (rounds > 0 && (next.size === 0 || elapsed + expected > settings.budgetMs)) {
          budgetExhausted = true;
          break;
        }
        for (const w of measuring) if (!next.has(w.ref.name)) w.leftOut = (w.leftOut ?? 0) + 1;
        measuring = measuring.filter((w) => next.has(w.ref.name));
      } else {
        const perRound = rounds === 0 ? 0 : elapsed / (rounds + 1);
        if (rounds > 0 && elapsed + perRound > settings.budgetMs) {
          budgetExhausted = true;
          break;
        }
      }
      const calibrating = r < (settings.calibrationRounds ?? Infinity);
      if (!calibrating && worker.calibration) {
        // its rounds are done: the calibration worker's process and container go
        const closing = monotonic();
        closedLogs.calibration = worker.calibration.log();
        await worker.calibration.close().catch(() => undefined);
        times.workersMs += monotonic() - closing;
        worker.calibration = null;
        delete open.calibration;
      }
      if (r > 0 && r % settings.roundsPerProcess === 0) {
        // fresh worker processes for the next rounds, started at once (no batch runs meanwhile);
        // a side that cannot start again is done
        // (a side no workload of the round measures keeps its process)
        const alive = (['base', 'expert', 'calibration'] as const).filter(
          (side) => worker[side] !== null && measuring.some((w) => active(w) && sidesOf(w, calibrating).includes(side)),
        );
        const restarting = monotonic();
        // the fresh processes import only the modules of the workloads still to measure
        const answers = await Promise.all(alive.map((side) => worker[side]!.restart(signal, stillMeasured(records, side))));
        times.workersMs += monotonic() - restarting;
        restarts.ms += monotonic() - restarting;
        restarts.times += 1;
        times.workerStarts += alive.length;
        for (const [k, side] of alive.entries()) {
          const restarted = answers[k]!;
          if (restarted.ok) {
            times.importMs += (restarted.importSeconds ?? 0) * 1000;
            continue;
          }
          for (const rec of records) {
            const sideRecord = side === 'calibration' ? rec.calibration : rec[side];
            if (sideRecord && sideRecord.failure === null)
              sideRecord.failure = { status: 'crashed', message: `the worker could not start again: ${restarted.message}`, round: r };
          }
          worker[side] = null;
        }
        if (!records.some(active)) break;
      }
      const steps: string[] = [];
      for (const w of shuffled(measuring.filter(active), random)) {
        const index = records.indexOf(w);
        const stepFrom = monotonic();
        // a single-value benchmark (mem, peakmem, track: no `number`) gives one value a batch: its
        // sides take turns by batch either way
        if (settings.mode === 'alternate' && settings.interleave === 'sample' && w.base.number !== null) {
          // sample by sample: every turn each side still measured runs one sample, in a new order
          const turns: string[] = [];
          // the base's turns of the workload's first round: what a sample's setup costs
          const probing = settings.samplesPerRound === 'by-setup' && w.samples === undefined;
          const setups: number[] = [];
          const sampled: number[] = [];
          for (let k = 0; k < (w.samples ?? settings.samples) && active(w); k++) {
            const sides = shuffled(sidesOf(w, calibrating), random);
            turns.push(sides.map((s) => SIDE_LETTER[s]).join(''));
            for (const side of sides) {
              await run(w, side, r, undefined, { first: k === 0 });
              // the first turn's setup may hold a setup_cache and its warm-up: the later ones tell, when there are any
              // (run sets it for every batch that answers: undefined for a failed one or an older harness)
              const account = lastAccount as BatchResult['account'];
              if (probing && side === 'base' && account && (k > 0 || settings.samples === 1)) {
                setups.push(account.setup);
                sampled.push(account.samples);
              }
              if (!active(w)) break;
            }
          }
          if (probing && setups.length > 0) w.samples = samplesForSetup(settings.samples, median(setups)!, median(sampled)!);
          steps.push(`${index}:${turns.join('/')}`);
        } else if (settings.mode === 'alternate') {
          const sides = shuffled(sidesOf(w, calibrating), random);
          steps.push(`${index}:${sides.map((s) => SIDE_LETTER[s]).join('')}`);
          for (const side of sides) {
            await run(w, side, r);
            if (!active(w)) break;
          }
        } else {
          const others = shuffled(
            sidesOf(w, calibrating).filter((s) => s !== 'base'),
            random,
          );
          steps.push(`${index}:${others.map((s) => `A${SIDE_LETTER[s]}`).join('|')}`);
          for (const other of others) {
            // the base's batch and the other side's run at the same time, on their own cores
            const from = monotonic();
            const [a, b] = await Promise.all([
              run(w, 'base', r, other === 'calibration' ? w.calibrationBase! : undefined),
              run(w, other, r),
            ]);
            times.sideBySideMs += Math.max(0, a + b - (monotonic() - from));
            if (!active(w)) break;
          }
        }
        const cost = spent.get(w)!;
        cost.ms += monotonic() - stepFrom;
        cost.rounds += 1;
      }
      order.push(steps.join(' '));
      rounds += 1;
      settings.onRound?.(rounds, now() - started, measuring.length);
      if (settings.settle && settings.looks?.includes(rounds) && rounds < settings.rounds) {
        for (const [name, as] of settings.settle(result(rounds, budgetExhausted))) {
          const w = records.find((x) => x.ref.name === name);
          if (w && active(w)) w.settled = { round: rounds, as };
        }
      }
    }
    return result(rounds, budgetExhausted);
  } finally {
    await Promise.all(Object.values(open).map((w) => w.close().catch(() => undefined)));
  }
}
