import {
  ACCOUNT_SIDES,
  addSideAccounts,
  emptySideAccount,
  sideTotalMs,
  type AccountSide,
  type MeasurementAccount,
  type SideAccount,
  type WorkloadTime,
} from '../../../pipeline/concepts/measurement-account.js';
import type { BatchAccount } from './messages.js';

/**
 * The account of an interleaved measurement (pipeline/concepts/measurement-account.ts says what
 * each part is), assembled from what the driver timed (each batch's wall time, the workers'
 * starts and restarts, the selection) and what the harness timed inside each batch. Pure.
 */

/**
 * One batch's share of its side's account: the harness's setup, warm-up and samples (a batch of
 * the warm-up pass counts its one sample as warm-up: it is not evidence), and the rest of the
 * batch's wall time as the driver saw it as overhead. A batch the harness sent no account for (a
 * timeout, a crash, an older harness) is overhead whole. Should the harness's parts exceed the
 * wall time (clocks of different resolution), they are scaled to it, so that the four parts
 * always sum to the batch's wall time.
 */
export function batchShare(
  harness: BatchAccount | undefined,
  wallMs: number,
  options: { warmUpPass: boolean; failed: boolean },
): SideAccount {
  const wall = Math.max(0, wallMs);
  const failedMs = options.failed ? wall : 0;
  if (!harness) return { ...emptySideAccount(), overheadMs: wall, batches: 1, failedMs };
  const setup = harness.setup * 1000;
  const warmup = (harness.warmup + (options.warmUpPass ? harness.samples : 0)) * 1000;
  const samples = options.warmUpPass ? 0 : harness.samples * 1000;
  const inside = setup + warmup + samples;
  const scale = inside > wall && inside > 0 ? wall / inside : 1;
  return {
    setupMs: setup * scale,
    warmupMs: warmup * scale,
    samplesMs: samples * scale,
    overheadMs: Math.max(0, wall - inside * scale),
    batches: 1,
    failedMs,
  };
}

/** What the driver timed outside the batches. */
export interface DriverTimes {
  /** The measurement's wall time. */
  readonly wallMs: number;
  readonly workersMs: number;
  readonly workerStarts: number;
  readonly importMs: number;
  readonly selectionMs: number;
  readonly sideBySideMs: number;
}

/** A workload's sides' accounts (null: the side was not measured). */
export interface WorkloadAccounts {
  readonly name: string;
  readonly sides: Readonly<Record<AccountSide, SideAccount | null | undefined>>;
}

const HEAVIEST = 3;

/**
 * The measurement's account: the sides summed over the workloads, the driver's times, and the
 * driver's own time as the rest of the wall time (never below 0: with the sides' batches, the
 * workers and the selection timed apart on one clock, they cannot exceed the wall time but by
 * the clock's rounding).
 */
export function measurementAccount(workloads: readonly WorkloadAccounts[], times: DriverTimes): MeasurementAccount {
  const sides = Object.fromEntries(ACCOUNT_SIDES.map((s) => [s, emptySideAccount()])) as Record<AccountSide, SideAccount>;
  const perWorkload: WorkloadTime[] = [];
  for (const w of workloads) {
    let sum = emptySideAccount();
    for (const s of ACCOUNT_SIDES) {
      const x = w.sides[s];
      if (!x) continue;
      sides[s] = addSideAccounts(sides[s], x);
      sum = addSideAccounts(sum, x);
    }
    if (sum.batches > 0)
      perWorkload.push({
        workload: w.name,
        setupMs: sum.setupMs,
        warmupMs: sum.warmupMs,
        samplesMs: sum.samplesMs,
        overheadMs: sum.overheadMs,
      });
  }
  const batchesMs = ACCOUNT_SIDES.reduce((t, s) => t + sideTotalMs(sides[s]), 0);
  const accounted = batchesMs + times.workersMs + times.selectionMs - times.sideBySideMs;
  const total = (w: WorkloadTime) => w.setupMs + w.warmupMs + w.samplesMs + w.overheadMs;
  return {
    wallMs: times.wallMs,
    sides,
    workers: { ms: times.workersMs, starts: times.workerStarts, importMs: times.importMs },
    selectionMs: times.selectionMs,
    sideBySideMs: times.sideBySideMs,
    driverMs: Math.max(0, times.wallMs - accounted),
    heaviest: perWorkload.sort((a, b) => total(b) - total(a) || (a.workload < b.workload ? -1 : 1)).slice(0, HEAVIEST),
  };
}

/** The sum of the account's parts (equals its wall time, but by the clock's rounding). */
export function accountSumMs(a: MeasurementAccount): number {
  const sides = ACCOUNT_SIDES.reduce((t, s) => t + sideTotalMs(a.sides[s]), 0);
  return sides + a.workers.ms + a.selectionMs + a.driverMs - a.sideBySideMs;
}
