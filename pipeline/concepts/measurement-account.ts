import { z } from 'zod';

/**
 * The account of a measurement (issue 37): where the wall time of validate's interleaved
 * measurement (engine perfmine) went. Per workload and side, its batches' time split into
 *
 * - setup: the benchmark's setup_cache (when a batch ran it), its fresh instance, its setups and
 *   teardowns, those asv redoes between samples included (measured by the harness);
 * - warm-up: the warm-up before a batch's first sample, with number's calibration, and the whole
 *   warm-up pass before the rounds (its one sample is not evidence);
 * - samples: the timed samples with their timeit loops (what asv times, and nothing else);
 * - overhead: the batch's wall time as the driver saw it minus those three: the pipes and the
 *   messages, the harness's supervisor and the worker's own bookkeeping (its working directory),
 *   waiting, and the whole of a batch killed at its timeout or lost with its worker.
 *
 * and for the measurement as a whole: the worker processes (containers started, the suite
 * imported, the fresh processes between rounds), workload selection (the fingerprint pass), and
 * the driver's own time (the rest: its looks, shuffles, logs). The parts sum to the wall time:
 * Σ sides (setup + warm-up + samples + overhead) + workers + selection + driver − side by side
 * = wall, where side by side is the time two sides' batches ran at once (harness.mode duet,
 * counted in both sides; 0 in mode alternate). Pure; stored as JSON with the validation.
 */

export const ACCOUNT_SIDES = ['base', 'expert', 'calibration'] as const;
export type AccountSide = (typeof ACCOUNT_SIDES)[number];

const ms = z.number().nonnegative();

export const sideAccountSchema = z.object({
  setupMs: ms,
  warmupMs: ms,
  samplesMs: ms,
  overheadMs: ms,
  /** Batches run. */
  batches: z.number().int().nonnegative(),
  /** The wall time of the batches that gave no samples (failed, skipped, killed): part of the four above. */
  failedMs: ms,
});
export type SideAccount = z.infer<typeof sideAccountSchema>;

/** One workload's time over its sides (the heaviest are kept with the measurement's account). */
export const workloadTimeSchema = z.object({
  workload: z.string(),
  setupMs: ms,
  warmupMs: ms,
  samplesMs: ms,
  overheadMs: ms,
});
export type WorkloadTime = z.infer<typeof workloadTimeSchema>;

export const measurementAccountSchema = z.object({
  wallMs: ms,
  sides: z.object({ base: sideAccountSchema, expert: sideAccountSchema, calibration: sideAccountSchema }),
  /** Starting the workers (containers, interpreters, the suite's import) and replacing their processes between rounds. */
  workers: z.object({
    ms,
    /** Worker processes started (the first of each side and every fresh one). */
    starts: z.number().int().nonnegative(),
    /** The suite's import as the harness timed it, summed over the processes (inside `ms`; sides may import at once). */
    importMs: ms,
  }),
  /** Workload selection: fingerprinting the workloads at the base and choosing (validate.selection coverage). */
  selectionMs: ms,
  /** Time two sides' batches ran at the same time (mode duet), counted in both sides' parts. */
  sideBySideMs: ms,
  /** The rest of the wall time: the driver's own work between batches. */
  driverMs: ms,
  /** The workloads that took the longest, over their sides, longest first (up to 3). */
  heaviest: z.array(workloadTimeSchema),
});
export type MeasurementAccount = z.infer<typeof measurementAccountSchema>;

export function emptySideAccount(): SideAccount {
  return { setupMs: 0, warmupMs: 0, samplesMs: 0, overheadMs: 0, batches: 0, failedMs: 0 };
}

/** a + b, part by part. */
export function addSideAccounts(a: SideAccount, b: SideAccount): SideAccount {
  return {
    setupMs: a.setupMs + b.setupMs,
    warmupMs: a.warmupMs + b.warmupMs,
    samplesMs: a.samplesMs + b.samplesMs,
    overheadMs: a.overheadMs + b.overheadMs,
    batches: a.batches + b.batches,
    failedMs: a.failedMs + b.failedMs,
  };
}

export function sideTotalMs(s: SideAccount): number {
  return s.setupMs + s.warmupMs + s.samplesMs + s.overheadMs;
}

/** The measurement's parts summed over the sides: what `perfmine status` and the report show. */
export interface AccountTotals {
  readonly wallMs: number;
  readonly setupMs: number;
  readonly warmupMs: number;
  readonly samplesMs: number;
  readonly selectionMs: number;
  /** Batches' overhead + workers + driver. */
  readonly overheadMs: number;
  readonly batchOverheadMs: number;
  readonly workersMs: number;
  readonly driverMs: number;
  readonly sideBySideMs: number;
}

export function accountTotals(a: MeasurementAccount): AccountTotals {
  const all = ACCOUNT_SIDES.map((s) => a.sides[s]).reduce(addSideAccounts, emptySideAccount());
  return {
    wallMs: a.wallMs,
    setupMs: all.setupMs,
    warmupMs: all.warmupMs,
    samplesMs: all.samplesMs,
    selectionMs: a.selectionMs,
    overheadMs: all.overheadMs + a.workers.ms + a.driverMs,
    batchOverheadMs: all.overheadMs,
    workersMs: a.workers.ms,
    driverMs: a.driverMs,
    sideBySideMs: a.sideBySideMs,
  };
}

const TOTAL_KEYS = [
  'wallMs',
  'setupMs',
  'warmupMs',
  'samplesMs',
  'selectionMs',
  'overheadMs',
  'batchOverheadMs',
  'workersMs',
  'driverMs',
  'sideBySideMs',
] as const satisfies readonly (keyof AccountTotals)[];

/** Several measurements' totals added (a month's candidates). */
export function sumTotals(list: readonly AccountTotals[]): AccountTotals {
  const out = Object.fromEntries(TOTAL_KEYS.map((k) => [k, 0])) as Record<keyof AccountTotals, number>;
  for (const x of list) for (const k of TOTAL_KEYS) out[k] += x[k];
  return out;
}

/** A stored account (JSON text), or null when there is none or it is not one. */
export function parseAccount(text: string | null | undefined): MeasurementAccount | null {
  if (text === null || text === undefined) return null;
  try {
    const r = measurementAccountSchema.safeParse(JSON.parse(text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** Seconds, one decimal (minutes and seconds past 10 minutes). */
export function formatSeconds(milliseconds: number): string {
  const s = milliseconds / 1000;
  if (s < 600) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

const share = (part: number, whole: number) => (whole > 0 ? ` (${Math.round((100 * part) / whole)}%)` : '');

/** The totals as text: the wall time, then its parts (with their shares of it) and what the overhead is made of. */
export function formatTotals(t: AccountTotals, starts?: { readonly processes: number; readonly importMs: number }): string {
  const f = formatSeconds;
  const parts = [
    `setup ${f(t.setupMs)}${share(t.setupMs, t.wallMs)}`,
    `warm-up ${f(t.warmupMs)}${share(t.warmupMs, t.wallMs)}`,
    `samples ${f(t.samplesMs)}${share(t.samplesMs, t.wallMs)}`,
    ...(t.selectionMs > 0 ? [`selection ${f(t.selectionMs)}${share(t.selectionMs, t.wallMs)}`] : []),
    `overhead ${f(t.overheadMs)}${share(t.overheadMs, t.wallMs)}`,
  ];
  const processes = starts ? `${starts.processes} worker process${starts.processes === 1 ? '' : 'es'} ` : 'worker processes ';
  const imports = starts && starts.importMs > 0 ? ` (suite imports ${f(starts.importMs)})` : '';
  const overhead = [`batches ${f(t.batchOverheadMs)}`, `${processes}${f(t.workersMs)}${imports}`, `driver ${f(t.driverMs)}`];
  const sideBySide = t.sideBySideMs > 0 ? `, less ${f(t.sideBySideMs)} run side by side` : '';
  return `measured ${f(t.wallMs)}: ${parts.join(', ')}${sideBySide}; overhead: ${overhead.join(', ')}`;
}

/** The account as text lines (`perfmine status --stage validate --items`): the sum, then each side, then the heaviest workloads. */
export function formatAccount(a: MeasurementAccount): string[] {
  const f = formatSeconds;
  const lines = [formatTotals(accountTotals(a), { processes: a.workers.starts, importMs: a.workers.importMs })];
  const sides = ACCOUNT_SIDES.filter((s) => a.sides[s].batches > 0).map((s) => {
    const x = a.sides[s];
    return `${s} ${x.batches} batch${x.batches === 1 ? '' : 'es'}: setup ${f(x.setupMs)}, warm-up ${f(x.warmupMs)}, samples ${f(x.samplesMs)}, overhead ${f(x.overheadMs)}${x.failedMs > 0 ? ` (failed batches ${f(x.failedMs)})` : ''}`;
  });
  if (sides.length > 0) lines.push(sides.join('; '));
  if (a.heaviest.length > 0)
    lines.push(
      `heaviest: ${a.heaviest
        .map(
          (w) =>
            `${w.workload} ${f(w.setupMs + w.warmupMs + w.samplesMs + w.overheadMs)} (setup ${f(w.setupMs)}, samples ${f(w.samplesMs)})`,
        )
        .join('; ')}`,
    );
  return lines;
}
