import type { CandidateValidation } from '../stages/validate/validate-candidate.js';
import type { Db } from './store.js';
import { nowIso } from './store.js';

/** The measurements store (migration 0006): a candidate's validation, its invocations, its workloads' verdicts. */

export interface ValidationIdentity {
  readonly key: string;
  readonly repo: string;
  readonly number: number;
  readonly baseSha: string;
  readonly mergeSha: string;
  readonly baseImage: string;
}

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
const finite = (v: number | null | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Replaces everything stored about the candidate (call inside the stage's transaction). */
export function saveValidation(db: Db, id: ValidationIdentity, v: CandidateValidation): void {
  db.prepare('DELETE FROM validations WHERE key = ?').run(id.key);
  const p = v.verdicts?.paired ?? null;
  const c = p?.calibration ?? null;
  db.prepare(
    `INSERT INTO validations (key, repo, number, base_sha, merge_sha, base_image, expert_image, decision, detail, pairs, calibration_pairs,
       machine_factors, calibration_factors, calibrated, spread_log, threshold, fp_flagged, fp_compared, false_positive_rate,
       asv_calibration_flags, paired_options, tests, snapshot, benchmarks_json, budget_exhausted, validated_at, engine, protocol, bias_log, mds_median, selection)
     VALUES (@key, @repo, @number, @baseSha, @mergeSha, @baseImage, @expertImage, @decision, @detail, @pairs, @calibrationPairs,
       @machineFactors, @calibrationFactors, @calibrated, NULL, @threshold, @fpFlagged, @fpCompared, @fpRate,
       @asvCalibrationFlags, @pairedOptions, @tests, @snapshot, @benchmarksJson, @budgetExhausted, @validatedAt, @engine, @protocol, @biasLog, @mdsMedian, @selection)`,
  ).run({
    ...id,
    expertImage: v.expertImage,
    decision: v.decision.kept ? 'kept' : v.decision.reason,
    detail: v.decision.detail,
    pairs: p?.pairs ?? 0,
    calibrationPairs: c?.pairs ?? 0,
    machineFactors: JSON.stringify(p?.machineFactors ?? []),
    calibrationFactors: JSON.stringify(c?.machineFactors ?? []),
    calibrated: c?.calibrated ? 1 : 0,
    threshold: finite(p?.threshold),
    fpFlagged: c?.calibrated ? c.falsePositives.flagged : null,
    fpCompared: c?.calibrated ? c.falsePositives.compared : null,
    fpRate: finite(c?.falsePositives.rate),
    asvCalibrationFlags: v.verdicts?.asvOnCalibration ? v.verdicts.asvOnCalibration.improved + v.verdicts.asvOnCalibration.worsened : null,
    pairedOptions: JSON.stringify(p?.options ?? null),
    tests: json(v.tests),
    snapshot: json(v.snapshot),
    benchmarksJson: v.benchmarksJson,
    budgetExhausted: v.budgetExhausted ? 1 : 0,
    validatedAt: nowIso(),
    engine: v.protocol?.['engine'] === 'perfmine' ? 'perfmine' : 'asv',
    protocol: json(v.protocol),
    biasLog: c?.calibrated ? finite(c.biasLog) : null,
    mdsMedian: medianOf((v.verdicts?.workloads ?? []).map((w) => w.paired.mds)),
    selection: json(v.selection),
  });
  const inv = db.prepare(
    `INSERT INTO invocations (key, seq, role, pair, image, status, asv_exit_code, commit_sha, results, log_tail, duration_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const i of v.invocations) inv.run(id.key, i.seq, i.role, i.pair, i.image, i.status, i.asvExitCode, i.commit, i.results, i.log, i.durationMs);
  const wl = db.prepare(
    `INSERT INTO workload_verdicts (key, workload, benchmark, module, class_name, function, params, unit, base_median, expert_median, speedup,
       asv_mark, asv_change, asv_ratio, asv_tilde, asv_p_value, base_samples, expert_samples, paired_change, paired_reason, pair_ratios,
       normalized_ratios, normalized_median, usable_pairs, faster_pairs, slower_pairs, threshold, noise, p_value, significant, mds, settled)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const settled = new Map((v.harness?.workloads ?? []).map((w) => [w.ref.name, w.settled]));
  for (const w of v.verdicts?.workloads ?? []) {
    wl.run(
      id.key,
      w.name,
      w.benchmark,
      w.module,
      w.className,
      w.function,
      w.params,
      w.unit,
      finite(w.baseMedian),
      finite(w.expertMedian),
      finite(w.speedup),
      w.asv.mark,
      w.asv.change,
      finite(w.asv.ratio),
      w.asv.tilde ? 1 : 0,
      finite(w.asv.pValue),
      w.asv.baseSamples,
      w.asv.expertSamples,
      w.paired.change,
      w.paired.reason,
      JSON.stringify(w.paired.pairRatios),
      JSON.stringify(w.paired.normalizedRatios),
      finite(w.paired.normalizedMedian),
      w.paired.usablePairs,
      w.paired.fasterPairs,
      w.paired.slowerPairs,
      p!.threshold,
      finite(w.paired.noise),
      finite(w.paired.pValue),
      w.paired.significant ? 1 : 0,
      finite(w.paired.mds),
      json(settled.get(w.name) ?? null),
    );
  }
  const batch = db.prepare('INSERT INTO harness_batches (key, workload, side, number, samples, failure) VALUES (?, ?, ?, ?, ?, ?)');
  for (const w of v.harness?.workloads ?? []) {
    for (const side of ['base', 'expert', 'calibration'] as const) {
      const rec = w[side];
      if (rec === null) continue;
      // duet: the calibration pair's own base batches are kept beside the calibration side's
      const rounds = side === 'calibration' && w.calibrationBase ? rec.rounds.map((r, i) => ({ calibration: r, base: w.calibrationBase![i] ?? null })) : rec.rounds;
      batch.run(id.key, w.ref.name, side, rec.number, JSON.stringify(rounds), json(rec.failure));
    }
  }
}

function medianOf(values: readonly (number | null)[]): number | null {
  const xs = values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = xs.length >> 1;
  return xs.length % 2 === 1 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
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
  readonly asv: { readonly mark: string; readonly change: string; readonly ratio: number | null; readonly tilde: boolean; readonly pValue: number | null };
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
  /** Median over the workloads of the minimum detectable speedup. */
  readonly mdsMedian: number | null;
  /** Which workloads were measured and why ({mode, reason, selected, controls, skipped, touched}; null: all, without selection). */
  readonly selection: { readonly mode: string; readonly reason: string; readonly selected: string[]; readonly controls: string[]; readonly skipped: string[] } | null;
}

export function loadValidation(db: Db, key: string): StoredValidation | undefined {
  const r = db
    .prepare<[string], Record<string, unknown>>(
      `SELECT key, decision, detail, pairs, calibration_pairs, machine_factors, calibration_factors, calibrated, threshold,
              fp_flagged, fp_compared, false_positive_rate, asv_calibration_flags, engine, protocol, mds_median, selection FROM validations WHERE key = ?`,
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
    falsePositives: { flagged: r['fp_flagged'] as number | null, compared: r['fp_compared'] as number | null, rate: r['false_positive_rate'] as number | null },
    asvCalibrationFlags: r['asv_calibration_flags'] as number | null,
    engine: r['engine'] as string,
    protocol: r['protocol'] === null ? null : (JSON.parse(r['protocol'] as string) as Record<string, unknown>),
    mdsMedian: r['mds_median'] as number | null,
    selection: r['selection'] === null ? null : (JSON.parse(r['selection'] as string) as StoredValidation['selection']),
  };
}

export interface StoredInvocation {
  readonly seq: number;
  readonly role: string;
  readonly pair: number;
  readonly status: string;
  readonly results: string | null;
}

export function loadInvocations(db: Db, key: string): StoredInvocation[] {
  return db.prepare<[string], StoredInvocation>('SELECT seq, role, pair, status, results FROM invocations WHERE key = ? ORDER BY seq').all(key);
}
