import { formatGithubTable } from '../../pipeline/concepts/asv/table.js';
import type { PairedChange } from './paired/index.js';
import type { TwoVerdictReport, WorkloadVerdicts } from './two-verdicts.js';

/**
 * The text `perfmine compare` prints for per-invocation sides, after asv's pooled table: the
 * paired protocol's numbers (pairs, machine factors, calibration, false-positive rate, minimum
 * detectable speedups) and one
 * row per workload with both verdicts. Pure.
 */

const MARK: Record<PairedChange, string> = { improved: '-', worsened: '+', unchanged: ' ', incomparable: 'x' };

function fixed(x: number | null | undefined, digits = 2): string {
  return typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : 'n/a';
}

function percent(x: number | null): string {
  return x === null ? 'n/a' : `${(100 * x).toFixed(1)}%`;
}

export interface FormatTwoVerdictOptions {
  /** Only workloads that either verdict flags. */
  readonly onlyChanged?: boolean;
}

function flagged(w: WorkloadVerdicts): boolean {
  return w.paired.change === 'improved' || w.paired.change === 'worsened' || w.asv.mark !== ' ';
}

export function formatTwoVerdicts(report: TwoVerdictReport, options: FormatTwoVerdictOptions = {}): string {
  const p = report.paired;
  const c = p.calibration;
  const lines: string[] = [];
  lines.push(
    `perfmine paired verdict: ${p.pairs} base/expert pair${p.pairs === 1 ? '' : 's'}${p.unpaired > 0 ? ` (${p.unpaired} unpaired invocation${p.unpaired === 1 ? '' : 's'} left out)` : ''}`,
  );
  lines.push(
    `machine-speed factor per pair: ${p.machineFactors.map((f, i) => `${fixed(f, 3)}${p.normalized[i] ? '' : ' (not normalized)'}`).join(' ') || 'none'}`,
  );
  if (c.calibrated) {
    lines.push(
      `calibration: ${c.pairs} base/base pairs (factors ${c.machineFactors.map((f) => fixed(f, 3)).join(' ')}); ` +
        `bias allowance = ${fixed(Math.exp(c.biasLog), 3)}; effect floor = max(${p.options.thresholdFloor}, bias) = ${fixed(p.threshold, 3)}`,
    );
    lines.push(
      `false positives on base/base (the same rule, leave one workload out): ${c.falsePositives.flagged} of ${c.falsePositives.compared} (${percent(c.falsePositives.rate)})` +
        (report.asvOnCalibration
          ? `; asv's pooled rule on the same base/base: ${report.asvOnCalibration.improved} improved, ${report.asvOnCalibration.worsened} worse`
          : ''),
    );
  } else {
    lines.push(
      `calibration: none (${c.pairs} base/base pairs; at least ${p.options.minCalibrationPairs} needed): no bias allowance, no false-positive rate`,
    );
  }
  lines.push(
    `rule: each workload against its own noise (its pairs and base/base pairs, pooled with the others as far as it has little evidence); ` +
      `Holm at alpha ${p.options.alpha} over ${report.workloads.filter((w) => w.paired.pValue !== null).length} workloads; ` +
      `at least ${Math.round(p.options.consistency * 100)}% of at least ${p.options.minPairs} pairs the same way; never under ${p.options.thresholdFloor}`,
  );
  const mds = report.workloads
    .map((w) => w.paired.mds)
    .filter((x): x is number => x !== null)
    .sort((x, y) => x - y);
  if (mds.length > 0)
    lines.push(`minimum detectable speedup: median ${fixed(mds[mds.length >> 1], 3)}, from ${fixed(mds[0], 3)} to ${fixed(mds.at(-1), 3)}`);
  lines.push(
    `paired: ${p.counts.improved} improved, ${p.counts.worsened} worse, ${p.counts.unchanged} unchanged, ${p.counts.incomparable} incomparable`,
  );
  const asvImproved = report.workloads.filter((w) => w.asv.mark === '-').length;
  const asvWorse = report.workloads.filter((w) => w.asv.mark === '+').length;
  lines.push(`asv (pooled samples): ${asvImproved} improved, ${asvWorse} worse`);

  const rows = report.workloads
    .filter((w) => !options.onlyChanged || flagged(w))
    .map((w) => [
      MARK[w.paired.change],
      w.asv.mark,
      w.paired.usablePairs === 0 ? 'n/a' : `${w.paired.fasterPairs}/${w.paired.usablePairs}`,
      fixed(w.paired.normalizedMedian, 3),
      fixed(w.paired.mds, 3),
      w.paired.pValue === null ? 'n/a' : w.paired.pValue.toPrecision(2),
      w.paired.normalizedRatios.map((r) => fixed(r)).join(' '),
      w.asv.ratio === null ? 'n/a' : `${w.asv.tilde ? '~' : ''}${fixed(w.asv.ratio)}`,
      w.asv.pValue === null ? 'n/a' : w.asv.pValue.toPrecision(2),
      w.paired.reason ?? '',
      w.name,
    ]);
  if (rows.length > 0) {
    lines.push('');
    lines.push(
      formatGithubTable(
        [
          'Paired',
          'asv',
          'Faster pairs',
          'Normalized',
          'MDS',
          'p',
          'Pair ratios (normalized)',
          'asv ratio',
          'asv p',
          'Why',
          'Benchmark (Parameter)',
        ],
        rows,
      ),
    );
  }
  return lines.join('\n');
}
