import type { ValidationRows, WorkloadVerdictRow, HarnessBatchRow } from '../../cache/measurements.js';
import type { CandidateValidation } from './validate-candidate.js';

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
const finite = (v: number | null | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Replaces everything stored about the candidate (call inside the stage's transaction). */
/** What the store keeps of a candidate's validation, as rows (cache/measurements.ts writes them). Pure. */
export function validationRows(v: CandidateValidation): ValidationRows {
  const p = v.verdicts?.paired ?? null;
  const c = p?.calibration ?? null;
  const validation = {
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
    engine: v.protocol?.['engine'] === 'perfmine' ? 'perfmine' : 'asv',
    protocol: json(v.protocol),
    biasLog: c?.calibrated ? finite(c.biasLog) : null,
    mdsMedian: medianOf((v.verdicts?.workloads ?? []).map((w) => w.paired.mds)),
    selection: json(v.selection),
    account: json(v.harness?.account),
  } as const;
  const settled = new Map((v.harness?.workloads ?? []).map((w) => [w.ref.name, w.settled]));
  const workloads = (v.verdicts?.workloads ?? []).map((w): WorkloadVerdictRow => [
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
  ]);
  const batches: HarnessBatchRow[] = [];
  for (const w of v.harness?.workloads ?? []) {
    for (const side of ['base', 'expert', 'calibration'] as const) {
      const rec = w[side];
      if (rec === null) continue;
      // duet: the calibration pair's own base batches are kept beside the calibration side's
      const rounds =
        side === 'calibration' && w.calibrationBase
          ? rec.rounds.map((r, i) => ({ calibration: r, base: w.calibrationBase![i] ?? null }))
          : rec.rounds;
      batches.push({
        workload: w.ref.name,
        side,
        number: rec.number,
        samples: JSON.stringify(rounds),
        failure: json(rec.failure),
        account: json(rec.account),
      });
    }
  }
  return { validation, invocations: v.invocations, workloads, batches };
}

function medianOf(values: readonly (number | null)[]): number | null {
  const xs = values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = xs.length >> 1;
  return xs.length % 2 === 1 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
}
