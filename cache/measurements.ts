import type { Db } from './store.js';
import { nowIso } from './store.js';
import { parseAccount, sideAccountSchema, type MeasurementAccount, type SideAccount } from '../pipeline/concepts/measurement-account.js';

/** The measurements store (migration 0006): a candidate's validation, its invocations, its workloads' verdicts. */

export interface ValidationIdentity {
  readonly key: string;
  readonly repo: string;
  readonly number: number;
  readonly baseSha: string;
  readonly mergeSha: string;
  readonly baseImage: string;
}

type SqlValue = string | number | null;

/** The validations row of a candidate (beside its identity), as validate assembles it (stages/validate/validation-rows.ts). */
export interface ValidationRow {
  readonly expertImage: string | null;
  readonly decision: string;
  readonly detail: string | null;
  readonly pairs: number;
  readonly calibrationPairs: number;
  readonly machineFactors: string;
  readonly calibrationFactors: string;
  readonly calibrated: 0 | 1;
  readonly threshold: number | null;
  readonly fpFlagged: number | null;
  readonly fpCompared: number | null;
  readonly fpRate: number | null;
  readonly asvCalibrationFlags: number | null;
  readonly pairedOptions: string;
  readonly tests: string | null;
  readonly snapshot: string | null;
  readonly benchmarksJson: string | null;
  readonly budgetExhausted: 0 | 1;
  readonly engine: 'perfmine' | 'asv';
  readonly protocol: string | null;
  readonly biasLog: number | null;
  readonly mdsMedian: number | null;
  readonly selection: string | null;
  /** JSON: where the measurement's time went (engine perfmine; migration 0021); null: none recorded. */
  readonly account?: string | null;
}

/** One asv or harness invocation of a candidate. */
export interface InvocationRow {
  readonly seq: number;
  readonly role: string;
  readonly pair: number;
  readonly image: string;
  readonly status: string;
  readonly asvExitCode: number | null;
  readonly commit: string | null;
  readonly results: string | null;
  readonly log: string;
  readonly durationMs: number;
}

/** The workload_verdicts columns after the key, in table order. */
export type WorkloadVerdictRow = readonly SqlValue[];

/** One harness batch: workload, side, batch number, samples (JSON), failure (JSON or null), account (JSON or null). */
export interface HarnessBatchRow {
  readonly workload: string;
  readonly side: 'base' | 'expert' | 'calibration';
  readonly number: number | null;
  readonly samples: string;
  readonly failure: string | null;
  readonly account?: string | null;
}

/** Everything stored about a candidate's validation. */
export interface ValidationRows {
  readonly validation: ValidationRow;
  readonly invocations: readonly InvocationRow[];
  readonly workloads: readonly WorkloadVerdictRow[];
  readonly batches: readonly HarnessBatchRow[];
}

/** Replaces everything stored about the candidate (call inside the stage's transaction). */
export function saveValidation(db: Db, id: ValidationIdentity, rows: ValidationRows): void {
  db.prepare('DELETE FROM validations WHERE key = ?').run(id.key);
  db.prepare(
    `INSERT INTO validations (key, repo, number, base_sha, merge_sha, base_image, expert_image, decision, detail, pairs, calibration_pairs,
       machine_factors, calibration_factors, calibrated, spread_log, threshold, fp_flagged, fp_compared, false_positive_rate,
       asv_calibration_flags, paired_options, tests, snapshot, benchmarks_json, budget_exhausted, validated_at, engine, protocol, bias_log, mds_median, selection,
       account)
     VALUES (@key, @repo, @number, @baseSha, @mergeSha, @baseImage, @expertImage, @decision, @detail, @pairs, @calibrationPairs,
       @machineFactors, @calibrationFactors, @calibrated, NULL, @threshold, @fpFlagged, @fpCompared, @fpRate,
       @asvCalibrationFlags, @pairedOptions, @tests, @snapshot, @benchmarksJson, @budgetExhausted, @validatedAt, @engine, @protocol, @biasLog, @mdsMedian, @selection,
       @account)`,
  ).run({ ...id, ...rows.validation, account: rows.validation.account ?? null, validatedAt: nowIso() });
  const inv = db.prepare(
    `INSERT INTO invocations (key, seq, role, pair, image, status, asv_exit_code, commit_sha, results, log_tail, duration_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const i of rows.invocations)
    inv.run(id.key, i.seq, i.role, i.pair, i.image, i.status, i.asvExitCode, i.commit, i.results, i.log, i.durationMs);
  const wl = db.prepare(
    `INSERT INTO workload_verdicts (key, workload, benchmark, module, class_name, function, params, unit, base_median, expert_median, speedup,
       asv_mark, asv_change, asv_ratio, asv_tilde, asv_p_value, base_samples, expert_samples, paired_change, paired_reason, pair_ratios,
       normalized_ratios, normalized_median, usable_pairs, faster_pairs, slower_pairs, threshold, noise, p_value, significant, mds, settled)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const w of rows.workloads) wl.run(id.key, ...w);
  const batch = db.prepare(
    'INSERT INTO harness_batches (key, workload, side, number, samples, failure, account) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  for (const b of rows.batches) batch.run(id.key, b.workload, b.side, b.number, b.samples, b.failure, b.account ?? null);
}

/** A workload's place in the suite and its pooled medians: what validate computes and the store keeps. */
export interface WorkloadMedians {
  /** The benchmark (asv key) and its place in the suite. */
  readonly benchmark: string;
  readonly module: string;
  readonly className: string | null;
  readonly function: string;
  readonly params: string | null;
  readonly unit: string | null;
  /** Pooled medians (asv's stored value of the pooled samples). */
  readonly baseMedian: number | null;
  readonly expertMedian: number | null;
  /** FormulaCode's speedup: base / expert of the pooled medians. */
  readonly speedup: number | null;
}

export interface StoredWorkloadVerdict extends WorkloadMedians {
  readonly workload: string;
  readonly asv: {
    readonly mark: string;
    readonly change: string;
    readonly ratio: number | null;
    readonly tilde: boolean;
    readonly pValue: number | null;
  };
  readonly paired: {
    readonly change: 'improved' | 'worsened' | 'unchanged' | 'incomparable';
    readonly reason: string | null;
    readonly pairRatios: (number | null)[];
    readonly normalizedRatios: (number | null)[];
    readonly normalizedMedian: number | null;
    readonly usablePairs: number;
    readonly fasterPairs: number;
    readonly threshold: number;
    /** The workload's minimum detectable speedup (null before migration 0007, or untested). */
    readonly mds: number | null;
    readonly pValue: number | null;
    readonly noise: number | null;
    /** Adaptive sampling: when and how its verdict was settled early (null: measured to the end). */
    readonly settled: { readonly round: number; readonly as: string } | null;
  };
}

interface WorkloadRow {
  workload: string;
  benchmark: string;
  module: string;
  class_name: string | null;
  function: string;
  params: string | null;
  unit: string | null;
  base_median: number | null;
  expert_median: number | null;
  speedup: number | null;
  asv_mark: string;
  asv_change: string;
  asv_ratio: number | null;
  asv_tilde: number;
  asv_p_value: number | null;
  paired_change: StoredWorkloadVerdict['paired']['change'];
  paired_reason: string | null;
  pair_ratios: string;
  normalized_ratios: string;
  normalized_median: number | null;
  usable_pairs: number;
  faster_pairs: number;
  threshold: number;
  mds: number | null;
  p_value: number | null;
  noise: number | null;
  settled: string | null;
}

/** A candidate's workloads with both verdicts, sorted by name (byte order). */
export function loadWorkloadVerdicts(db: Db, key: string): StoredWorkloadVerdict[] {
  const rows = db.prepare<[string], WorkloadRow>('SELECT * FROM workload_verdicts WHERE key = ? ORDER BY workload').all(key);
  return rows.map((r) => ({
    workload: r.workload,
    benchmark: r.benchmark,
    module: r.module,
    className: r.class_name,
    function: r.function,
    params: r.params,
    unit: r.unit,
    baseMedian: r.base_median,
    expertMedian: r.expert_median,
    speedup: r.speedup,
    asv: { mark: r.asv_mark, change: r.asv_change, ratio: r.asv_ratio, tilde: r.asv_tilde === 1, pValue: r.asv_p_value },
    paired: {
      change: r.paired_change,
      reason: r.paired_reason,
      pairRatios: JSON.parse(r.pair_ratios) as (number | null)[],
      normalizedRatios: JSON.parse(r.normalized_ratios) as (number | null)[],
      normalizedMedian: r.normalized_median,
      usablePairs: r.usable_pairs,
      fasterPairs: r.faster_pairs,
      threshold: r.threshold,
      mds: r.mds,
      pValue: r.p_value,
      noise: r.noise,
      settled: r.settled === null ? null : (JSON.parse(r.settled) as { round: number; as: string }),
    },
  }));
}

export interface StoredValidation {
  readonly key: string;
  readonly decision: string;
  readonly detail: string;
  readonly pairs: number;
  readonly calibrationPairs: number;
  readonly machineFactors: number[];
  readonly calibrationFactors: number[];
  readonly calibrated: boolean;
  readonly threshold: number | null;
  readonly falsePositives: { readonly flagged: number | null; readonly compared: number | null; readonly rate: number | null };
  readonly asvCalibrationFlags: number | null;
  /** `perfmine` (the interleaved harness) or `asv`. */
  readonly engine: string;
  readonly protocol: Record<string, unknown> | null;
  /** The paired verdict's options the decision was made with (validate.paired). */
  readonly pairedOptions: Record<string, unknown> | null;
  /** Median over the workloads of the minimum detectable speedup. */
  readonly mdsMedian: number | null;
  /** Which workloads were measured and why ({mode, reason, selected, controls, skipped, touched}; null: all, without selection). */
  readonly selection: {
    readonly mode: string;
    readonly reason: string;
    readonly selected: string[];
    readonly controls: string[];
    readonly skipped: string[];
  } | null;
  /** Where the measurement's time went (engine perfmine, validated since migration 0021); null: not recorded. */
  readonly account?: MeasurementAccount | null;
}

export function loadValidation(db: Db, key: string): StoredValidation | undefined {
  const r = db
    .prepare<[string], Record<string, unknown>>(
      `SELECT key, decision, detail, pairs, calibration_pairs, machine_factors, calibration_factors, calibrated, threshold,
              fp_flagged, fp_compared, false_positive_rate, asv_calibration_flags, engine, protocol, paired_options, mds_median, selection,
              account FROM validations WHERE key = ?`,
    )
    .get(key);
  if (!r) return undefined;
  return {
    key: r['key'] as string,
    decision: r['decision'] as string,
    detail: r['detail'] as string,
    pairs: r['pairs'] as number,
    calibrationPairs: r['calibration_pairs'] as number,
    machineFactors: JSON.parse(r['machine_factors'] as string) as number[],
    calibrationFactors: JSON.parse(r['calibration_factors'] as string) as number[],
    calibrated: r['calibrated'] === 1,
    threshold: r['threshold'] as number | null,
    falsePositives: {
      flagged: r['fp_flagged'] as number | null,
      compared: r['fp_compared'] as number | null,
      rate: r['false_positive_rate'] as number | null,
    },
    asvCalibrationFlags: r['asv_calibration_flags'] as number | null,
    engine: r['engine'] as string,
    protocol: r['protocol'] === null ? null : (JSON.parse(r['protocol'] as string) as Record<string, unknown>),
    pairedOptions: (JSON.parse((r['paired_options'] as string | null) ?? 'null') as Record<string, unknown> | null) ?? null,
    mdsMedian: r['mds_median'] as number | null,
    selection: r['selection'] === null ? null : (JSON.parse(r['selection'] as string) as StoredValidation['selection']),
    account: parseAccount(r['account'] as string | null),
  };
}

/**
 * The recorded accounts of validations (issue 37), by candidate key: of the keys given, or of
 * every validation. A validation without one (engine asv, or before migration 0021) is absent.
 */
export function loadAccounts(db: Db, keys?: readonly string[]): Map<string, MeasurementAccount> {
  const out = new Map<string, MeasurementAccount>();
  const rows = db.prepare<[], { key: string; account: string }>('SELECT key, account FROM validations WHERE account IS NOT NULL').all();
  const wanted = keys ? new Set(keys) : null;
  for (const r of rows) {
    if (wanted && !wanted.has(r.key)) continue;
    const a = parseAccount(r.account);
    if (a) out.set(r.key, a);
  }
  return out;
}

/** A workload's side's account as stored with its batches (null: none recorded). */
export function loadBatchAccounts(db: Db, key: string): { workload: string; side: string; account: SideAccount | null }[] {
  return db
    .prepare<[string], { workload: string; side: string; account: string | null }>(
      'SELECT workload, side, account FROM harness_batches WHERE key = ? ORDER BY workload, side',
    )
    .all(key)
    .map((r) => ({ workload: r.workload, side: r.side, account: parseSideAccount(r.account) }));
}

function parseSideAccount(text: string | null): SideAccount | null {
  if (text === null) return null;
  try {
    const r = sideAccountSchema.safeParse(JSON.parse(text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

export interface StoredInvocation {
  readonly seq: number;
  readonly role: string;
  readonly pair: number;
  readonly status: string;
  readonly results: string | null;
}

export function loadInvocations(db: Db, key: string): StoredInvocation[] {
  return db
    .prepare<[string], StoredInvocation>('SELECT seq, role, pair, status, results FROM invocations WHERE key = ? ORDER BY seq')
    .all(key);
}
