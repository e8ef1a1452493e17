import { computeStats } from '../../../pipeline/concepts/asv/compute-stats.js';
import { compareCodePoints, type ResultSet } from '../../../pipeline/concepts/asv/result-set.js';
import type { Workload } from '../../../pipeline/concepts/asv/workloads.js';
import type { PairColumn, PairTable } from '../paired/pairs.js';
import { logOf, median } from '../paired/stats.js';
import type { ReadyMessage } from './messages.js';
import type { InterleavedMeasurement, Side, WorkloadRecord } from './interleave.js';

/**
 * What the verdicts read from an interleaved measurement. Pure.
 *
 * - Pair tables: one pair per worker process generation, (base, expert) and (base, calibration),
 *   each side's value the median of its batches' medians in that generation (with a fresh
 *   process per round, the default, a pair is a round). The batches of a round run milliseconds
 *   apart, so no machine-speed normalization is needed: the ratio is taken as it is.
 * - Result sets per side, as asv would have written them: per workload the pooled samples of
 *   every round, their median and asv's statistics (asv's own verdict is made on these), and one
 *   result set per round (the layout `perfmine compare` reads as per-invocation files).
 */

function versionOf(start: ReadyMessage | null, benchmark: string): string | null {
  return start?.benchmarks[benchmark]?.version ?? null;
}

function batchValue(samples: readonly number[] | null | undefined): number | null {
  const m = samples && samples.length > 0 ? median(samples) : null;
  return logOf(m) === null ? null : m;
}

/** A side's value over rounds [from, to): the median of its usable batch values (null without any). */
function groupValue(reference: Reference, w: WorkloadRecord, from: number, to: number): number | null {
  const values: number[] = [];
  for (let r = from; r < to; r++) {
    const v = batchValue(reference(w, r));
    if (v !== null) values.push(v);
  }
  return values.length === 0 ? null : median(values);
}

type Reference = (w: WorkloadRecord, round: number) => readonly number[] | null | undefined;

function table(
  m: InterleavedMeasurement,
  first: Reference,
  second: Reference,
  label: [string, string],
  include: (w: WorkloadRecord) => boolean,
  rounds = m.rounds,
): PairTable {
  const expertStart = m.expert?.event === 'ready' ? m.expert : null;
  const baseStart = m.base.event === 'ready' ? m.base : null;
  const workloads = m.workloads.filter(include).sort((a, b) => compareCodePoints(a.ref.name, b.ref.name));
  const changed = workloads.map((w) => {
    const v1 = versionOf(baseStart, w.ref.benchmark);
    const v2 = label[1] === 'expert' ? versionOf(expertStart, w.ref.benchmark) : v1;
    return v1 !== null && v2 !== null && v1 !== v2;
  });
  const k = Math.max(1, m.roundsPerProcess);
  const pairs = Array.from({ length: Math.ceil(rounds / k) }, (_, g): PairColumn => {
    const [from, to] = [g * k, Math.min(rounds, (g + 1) * k)];
    const firstValues = workloads.map((w) => groupValue(first, w, from, to));
    const secondValues = workloads.map((w) => groupValue(second, w, from, to));
    const logRatios = workloads.map((_, i) => {
      const a = logOf(firstValues[i]);
      const b = logOf(secondValues[i]);
      return a === null || b === null || changed[i] ? null : b - a;
    });
    return {
      first: k === 1 ? `${label[0]} round ${g + 1}` : `${label[0]} rounds ${from + 1}-${to}`,
      second: k === 1 ? `${label[1]} round ${g + 1}` : `${label[1]} rounds ${from + 1}-${to}`,
      firstValues,
      secondValues,
      versionChanged: changed,
      logRatios,
      logFactor: 0,
      normalized: false,
      factorWorkloads: 0,
      normalizedLogs: logRatios,
    };
  });
  return { names: workloads.map((w) => w.ref.name), pairs, unpaired: 0 };
}

/** Base/expert pairs, one per round. */
export function harnessPairTable(m: InterleavedMeasurement): PairTable {
  return table(
    m,
    (w, r) => w.base.rounds[r],
    (w, r) => w.expert.rounds[r],
    ['base', 'expert'],
    () => true,
  );
}

/**
 * Base/base calibration pairs, one per round the calibration worker took part in (null when there
 * was no calibration worker).
 */
export function harnessCalibrationTable(m: InterleavedMeasurement): PairTable | null {
  if (!m.workloads.some((w) => w.calibration !== null)) return null;
  return table(
    m,
    (w, r) => (w.calibrationBase ? w.calibrationBase[r] : w.base.rounds[r]),
    (w, r) => w.calibration?.rounds[r],
    ['base', 'calibration'],
    (w) => w.calibration !== null,
    Math.min(m.rounds, m.calibrationRounds ?? Infinity),
  );
}

function workloadOf(
  w: WorkloadRecord,
  side: Side,
  samples: readonly number[],
  version: string | null,
  start: ReadyMessage | null,
): Workload {
  const rec = side === 'base' ? w.base : side === 'expert' ? w.expert : w.calibration!;
  const info = start?.benchmarks[w.ref.benchmark];
  const combos = info?.params ?? [];
  const paramValues = paramValuesOf(combos, w.ref.param);
  const base = { name: w.ref.name, key: w.ref.benchmark, paramValues, version };
  if (samples.length === 0) {
    // asv: null for a failure, NaN for a skip
    return { ...base, value: rec.failure?.status === 'skipped' ? Number.NaN : null, stats: null, samples: null };
  }
  const stats = computeStats(samples, rec.number ?? 1);
  return { ...base, value: stats?.result ?? null, stats: stats?.stats ?? null, samples: [...samples] };
}

/** The parameter values (repr strings) of combination `index` in itertools.product order. */
function paramValuesOf(params: readonly (readonly string[])[], index: number): string[] {
  const out: string[] = [];
  let rest = index;
  for (let i = params.length - 1; i >= 0; i--) {
    const list = params[i]!;
    out.unshift(list[rest % list.length] ?? '');
    rest = Math.floor(rest / list.length);
  }
  return out;
}

function startOf(m: InterleavedMeasurement, side: Side): ReadyMessage | null {
  const s = side === 'base' ? m.base : side === 'expert' ? m.expert : m.calibration;
  return s?.event === 'ready' ? s : null;
}

function sideRounds(w: WorkloadRecord, side: Side): (readonly number[] | null)[] | null {
  return side === 'base' ? w.base.rounds : side === 'expert' ? w.expert.rounds : (w.calibration?.rounds ?? null);
}

/** One side's pooled result set: every round's samples of each workload (asv's verdict reads it). */
export function harnessResultSet(m: InterleavedMeasurement, side: Side, commitHash: string): ResultSet {
  const start = startOf(m, side);
  const workloads = m.workloads.flatMap((w) => {
    const rounds = sideRounds(w, side);
    if (rounds === null) return [];
    const samples = rounds.slice(0, m.rounds).flatMap((r) => r ?? []);
    return [workloadOf(w, side, samples, versionOf(start, w.ref.benchmark), start)];
  });
  return { source: `harness ${side}`, commitHash, machineEnv: 'perfmine/harness', workloads };
}

/** One side's result sets round by round (the per-invocation layout of `perfmine compare`). */
export function harnessRoundSets(m: InterleavedMeasurement, side: Side, commitHash: string): ResultSet[] {
  const start = startOf(m, side);
  return Array.from({ length: m.rounds }, (_, r) => ({
    source: `harness ${side} round ${r + 1}`,
    commitHash,
    machineEnv: 'perfmine/harness',
    workloads: m.workloads.flatMap((w) => {
      const rounds = sideRounds(w, side);
      return rounds === null ? [] : [workloadOf(w, side, rounds[r] ?? [], versionOf(start, w.ref.benchmark), start)];
    }),
  }));
}
