import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BENCH_SCRIPT } from '../../pipeline/services/environments/harness-files.js';
import { harnessCalibrationTable, harnessPairTable } from '../../stages/validate/harness/tables.js';
import { finalAlpha, settleAtLook, tableEvidence, verdictOfTables, type PairedReport } from '../../stages/validate/paired/index.js';
import { mulberry32, shuffled } from '../../pipeline/random.js';
import { CASE_KINDS, interleavedOf, pairCase, type PairCase } from './pair-cases.js';

/**
 * perfmine-bench's verdict (perfmine_bench_stats.py) against validate's (stages/validate/paired/
 * and harness/tables.ts) on the same seeded measurements: identical changes and reasons, numbers
 * equal within 1e-9 relative, the same settlements at an interim look, and the same random draws
 * and orders for a seed. This is what keeps the two in step.
 */

interface PythonAnswer {
  readonly report: Record<string, unknown>;
  readonly settled: readonly (string | null)[] | null;
  readonly random?: readonly number[];
  readonly shuffled?: readonly number[];
}

/** perfmine-bench's answers to the cases, all in one run of the host's python3. */
function python(cases: readonly unknown[]): PythonAnswer[] {
  const out = spawnSync('python3', [BENCH_SCRIPT, '_verdict'], { input: JSON.stringify(cases), encoding: 'utf8', timeout: 120_000 });
  if (out.status !== 0) throw new Error(`perfmine_bench.py _verdict exited ${out.status}: ${out.stderr}`);
  return JSON.parse(out.stdout) as PythonAnswer[];
}

function typescript(c: PairCase): { report: PairedReport; settled: (string | null)[] | null } {
  const m = interleavedOf(c);
  const table = harnessPairTable(m);
  const calibration = harnessCalibrationTable(m);
  const report = verdictOfTables(table, calibration, { ...c.paired, alpha: finalAlpha(c.paired.alpha, c.adaptive) });
  if (c.adaptive.looks.length === 0) return { report, settled: null }; // validate makes no look then
  const { evidence } = tableEvidence(table, calibration, c.paired);
  const settled = settleAtLook(
    evidence,
    evidence.map(() => true),
    c.paired,
    c.adaptive,
  );
  return { report, settled };
}

/** Differences between the TypeScript value and Python's, at the TypeScript value's keys. */
function differences(ts: unknown, py: unknown, path: string, out: string[]): void {
  if (typeof ts === 'number' && typeof py === 'number') {
    const scale = Math.max(Math.abs(ts), Math.abs(py));
    if (!(ts === py || Math.abs(ts - py) <= 1e-9 * scale)) out.push(`${path}: ${ts} vs ${py}`);
  } else if (Array.isArray(ts) && Array.isArray(py)) {
    if (ts.length !== py.length) out.push(`${path}: length ${ts.length} vs ${py.length}`);
    else ts.forEach((v, i) => differences(v, py[i], `${path}[${i}]`, out));
  } else if (ts !== null && typeof ts === 'object' && py !== null && typeof py === 'object' && !Array.isArray(py)) {
    for (const [k, v] of Object.entries(ts)) differences(v, (py as Record<string, unknown>)[k], `${path}.${k}`, out);
  } else if (ts !== py) out.push(`${path}: ${JSON.stringify(ts)} vs ${JSON.stringify(py)}`);
}

const CASES: PairCase[] = Array.from({ length: 60 }, (_, i) => pairCase(1000 + i, CASE_KINDS[i % CASE_KINDS.length]!));

describe("perfmine-bench's verdict is validate's", () => {
  it('decides 60 seeded measurements exactly as validate does (changes, reasons, numbers within 1e-9)', () => {
    const changes = new Map<string, number>();
    const reasons = new Map<string, number>();
    const answers = python(CASES.map((c) => ({ measurement: c.measurement, paired: c.paired, adaptive: c.adaptive })));
    for (const [i, c] of CASES.entries()) {
      const ts = typescript(c);
      const py = answers[i]!;
      const found: string[] = [];
      differences(ts.report, py.report, `case ${c.seed} (${c.kind})`, found);
      differences(ts.settled, py.settled, `case ${c.seed} (${c.kind}) settled`, found);
      expect(found).toEqual([]);
      for (const w of ts.report.workloads) {
        changes.set(w.change, (changes.get(w.change) ?? 0) + 1);
        if (w.reason) reasons.set(w.reason, (reasons.get(w.reason) ?? 0) + 1);
      }
    }
    // a calibration bounded to its first rounds: one base/base pair per round it took part in
    const bounded = CASES.filter((c) => c.measurement.calibrationRounds !== undefined);
    expect(bounded.length).toBeGreaterThan(5);
    for (const c of bounded) {
      const { rounds, roundsPerProcess, calibrationRounds } = c.measurement;
      expect(typescript(c).report.calibration.pairs).toBe(Math.ceil(calibrationRounds! / roundsPerProcess));
      expect(typescript(c).report.pairs).toBe(Math.ceil(rounds / roundsPerProcess));
    }
    // the cases reach every decision of the rule
    for (const change of ['improved', 'worsened', 'unchanged', 'incomparable']) expect(changes.get(change) ?? 0).toBeGreaterThan(2);
    for (const reason of [
      'not-significant',
      'below-floor',
      'directions-disagree',
      'failed-on-base',
      'failed-on-expert',
      'benchmark-changed',
    ])
      expect(reasons.get(reason) ?? 0, reason).toBeGreaterThan(0);
  });

  it('draws the same random orders for a seed (mulberry32 and the shuffle)', () => {
    const seeds = [0, 1, 12345, 2 ** 31 - 1];
    const answers = python(seeds.map((seed) => ({ measurement: CASES[0]!.measurement, random: { seed, n: 20 } })));
    for (const [i, seed] of seeds.entries()) {
      const py = answers[i]!;
      const draw = mulberry32(seed);
      expect(py.random).toEqual(Array.from({ length: 20 }, () => draw()));
      expect(py.shuffled).toEqual(
        shuffled(
          Array.from({ length: 10 }, (_, i) => i),
          draw,
        ),
      );
    }
  });
});
