import type { WorkloadMedians } from '../../cache/measurements.js';
import type { BenchmarkInfo } from '../../pipeline/concepts/asv/benchmarks.js';
import { DEFAULT_DECIDE_OPTIONS, type Verdict } from '../../pipeline/concepts/asv/compare.js';
import { poolInvocations } from '../../pipeline/concepts/asv/invocations.js';
import { compareResultSets, type CompareReport, type CompareRow, type ResultSet } from '../../pipeline/concepts/asv/result-set.js';
import { mannWhitneyU } from '../../pipeline/concepts/asv/stats.js';
import { workloadHierarchy } from '../../pipeline/concepts/asv/workloads.js';
import { speedup } from '../../pipeline/concepts/asv/metrics.js';
import {
  DEFAULT_PAIRED_OPTIONS,
  pairedVerdict,
  type PairedInput,
  type PairedOptions,
  type PairedReport,
  type PairedWorkloadVerdict,
} from './paired/index.js';

/**
 * The two verdicts per workload, side by side: asv's own (`asv compare` on the pooled samples of
 * every invocation of a side, for parity with asv and FormulaCode) and perfmine's paired keep
 * verdict. Pure.
 */

export interface AsvPooledVerdict {
  readonly mark: Verdict['mark'];
  readonly change: Verdict['change'];
  /** expert / base of the pooled medians (asv's ratio). */
  readonly ratio: number | null;
  readonly tilde: boolean;
  /** Mann-Whitney U p-value of the pooled samples (asv's test); null without samples on both sides. */
  readonly pValue: number | null;
  readonly baseSamples: number;
  readonly expertSamples: number;
}

export interface WorkloadVerdicts extends WorkloadMedians {
  readonly name: string;
  readonly asv: AsvPooledVerdict;
  readonly paired: PairedWorkloadVerdict;
}

export interface CalibrationAsvCounts {
  /** What asv's pooled rule flags on base/base (first vs second side): all of it noise. */
  readonly improved: number;
  readonly worsened: number;
  readonly compared: number;
}

export interface TwoVerdictReport {
  readonly asv: CompareReport;
  readonly paired: PairedReport;
  readonly workloads: readonly WorkloadVerdicts[];
  readonly asvOnCalibration: CalibrationAsvCounts | null;
}

export interface TwoVerdictOptions {
  readonly paired?: PairedOptions;
  readonly factor?: number;
  readonly benchmarks?: ReadonlyMap<string, BenchmarkInfo> | null;
}

function finite(v: number | null | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function pValueOf(row: CompareRow | undefined): number | null {
  const a = row?.before?.samples?.filter((s) => !Number.isNaN(s));
  const b = row?.after?.samples?.filter((s) => !Number.isNaN(s));
  if (!a || !b || a.length === 0 || b.length === 0) return null;
  return mannWhitneyU(a, b).p;
}

function countAsv(report: CompareReport): CalibrationAsvCounts {
  return {
    improved: report.rows.filter((r) => r.verdict.mark === '-').length,
    worsened: report.rows.filter((r) => r.verdict.mark === '+').length,
    compared: report.rows.length,
  };
}

/** Both verdicts on asv invocations: the paired verdict on invocation pairs, asv's on every invocation of a side pooled. */
export function twoVerdicts(input: PairedInput, options: TwoVerdictOptions = {}): TwoVerdictReport {
  const cal = input.calibration;
  return combineVerdicts(
    {
      paired: pairedVerdict(input, options.paired ?? DEFAULT_PAIRED_OPTIONS),
      base: input.base.length > 0 ? poolInvocations(input.base) : null,
      expert: input.expert.length > 0 ? poolInvocations(input.expert) : null,
      calibration:
        cal && cal.first.length > 0 && cal.second.length > 0
          ? { first: poolInvocations(cal.first), second: poolInvocations(cal.second) }
          : null,
    },
    options,
  );
}

/** What both verdicts are read from, whichever engine measured: perfmine's verdict, and each side's samples pooled. */
export interface VerdictSources {
  readonly paired: PairedReport;
  readonly base: ResultSet | null;
  readonly expert: ResultSet | null;
  readonly calibration: { readonly first: ResultSet; readonly second: ResultSet } | null;
}

/** perfmine's verdict beside asv's own on the pooled samples, workload by workload. */
export function combineVerdicts(sources: VerdictSources, options: TwoVerdictOptions = {}): TwoVerdictReport {
  const factor = options.factor ?? DEFAULT_DECIDE_OPTIONS.factor;
  const benchmarks = options.benchmarks ?? null;
  const paired = sources.paired;
  const asv = compareResultSets(sources.base ? [sources.base] : [], sources.expert ? [sources.expert] : [], { factor, benchmarks });
  const rows = new Map(asv.rows.map((r) => [r.name, r]));
  const workloads = paired.workloads.map((p): WorkloadVerdicts => {
    const row = rows.get(p.name);
    const h = workloadHierarchy(p.name);
    const baseMedian = finite(row?.before?.value);
    const expertMedian = finite(row?.after?.value);
    const benchmark = row?.key ?? p.name.replace(/\(.*$/, '');
    return {
      name: p.name,
      benchmark,
      module: h.module,
      className: h.className,
      function: h.function,
      params: h.params,
      unit: row?.unit ?? benchmarks?.get(benchmark)?.unit ?? null,
      baseMedian,
      expertMedian,
      speedup: speedup(baseMedian, expertMedian),
      asv: {
        mark: row?.verdict.mark ?? ' ',
        change: row?.verdict.change ?? 'unchanged',
        ratio: finite(row?.verdict.ratio),
        tilde: row?.verdict.tilde ?? false,
        pValue: pValueOf(row),
        baseSamples: row?.before?.samples?.length ?? 0,
        expertSamples: row?.after?.samples?.length ?? 0,
      },
      paired: p,
    };
  });
  const cal = sources.calibration;
  const asvOnCalibration = cal ? countAsv(compareResultSets([cal.first], [cal.second], { factor, benchmarks })) : null;
  return { asv, paired, workloads, asvOnCalibration };
}
