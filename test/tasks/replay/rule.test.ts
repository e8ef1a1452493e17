import { describe, expect, it } from 'vitest';
import { applyRule, DEFAULT_PAIRED_OPTIONS, type RuleResult } from '../../../stages/validate/paired/index.js';
import { medianStandardError } from '../../../stages/validate/paired/noise.js';
import { studentTUpperQuantile } from '../../../stages/validate/paired/student-t.js';
import {
  judgeReplay,
  judgeWorkload,
  recordedEstimate,
  REPLICATION_RULE,
  speedupEstimate,
  speedupsAgree,
  type RecordedWorkload,
  type ReplayedWorkload,
} from '../../../tasks/replay/rule.js';
import { memoDetail } from '../../../tasks/replay/verify-replay.js';
import { mulberry32 } from '../../helpers/prng.js';

/** A workload as workloads.json records it: improved by `speedup` with noise `noise` over `pairs` pairs. */
function recorded(speedup: number, noise: number, pairs = 20, change = 'improved', mds: number | null = 1.1): RecordedWorkload {
  return { name: 'bench.w', change, normalizedMedian: 1 / speedup, noise, usablePairs: pairs, mds };
}

/** A replayed workload: its change and numbers as the replay's rule gives them. */
function replayed(change: ReplayedWorkload['change'], speedup: number, se: number, rest: Partial<ReplayedWorkload> = {}): ReplayedWorkload {
  return {
    change,
    reason: null,
    medianLog: -Math.log(speedup),
    standardError: se,
    df: 39,
    mds: 1.1,
    pValue: 0.001,
    usablePairs: 20,
    fasterPairs: change === 'improved' ? 20 : 10,
    ...rest,
  };
}

describe('the speedup intervals', () => {
  it("are exp(-(δ ± t·se)) around the median log ratio, the replay's with its own df, the recorded one with df n - 1", () => {
    const e = speedupEstimate(Math.log(0.5), 0.05, 10, 0.95);
    const t = studentTUpperQuantile(0.025, 10);
    expect(e.speedup).toBeCloseTo(2, 12);
    expect(e.interval[0]).toBeCloseTo(Math.exp(-(Math.log(0.5) + t * 0.05)), 12);
    expect(e.interval[1]).toBeCloseTo(Math.exp(-(Math.log(0.5) - t * 0.05)), 12);

    const r = recordedEstimate(recorded(2, 0.1, 6), 0.95)!;
    const se = medianStandardError(0.01, 6);
    const t5 = studentTUpperQuantile(0.025, 5);
    expect(r.speedup).toBeCloseTo(2, 12);
    expect(r.interval[0]).toBeCloseTo(2 * Math.exp(-t5 * se), 12);
    expect(r.interval[1]).toBeCloseTo(2 * Math.exp(t5 * se), 12);
    // no noise recorded, or fewer than two pairs: no interval
    expect(recordedEstimate({ ...recorded(2, 0.1), noise: null }, 0.95)).toBeNull();
    expect(recordedEstimate(recorded(2, 0.1, 1), 0.95)).toBeNull();
    // identical pairs: a point
    expect(speedupEstimate(Math.log(0.5), 0, 5, 0.95).interval).toEqual([2, 2]);
  });

  it('agree when they overlap once each is widened by 10% of its own log speedup', () => {
    const narrow = (s: number) => ({ speedup: s, interval: [s * 0.99, s * 1.01] as const });
    // 1,464x recorded, 1,200x replayed, each measured to ±1%: a 20% difference, which the widening (±0.73 in log) covers
    expect(speedupsAgree(narrow(1464), narrow(1200), 0.1)).toBe(true);
    expect(speedupsAgree(narrow(1464), narrow(1200), 0)).toBe(false);
    // 2x against 1.3x, both measured to ±1%: the widening (±0.07 and ±0.026 in log) does not bridge log(2/1.3) = 0.43
    expect(speedupsAgree(narrow(2), narrow(1.3), 0.1)).toBe(false);
    expect(speedupsAgree(narrow(2), narrow(1.9), 0.1)).toBe(true);
  });
});

describe('the rule for one improved workload', () => {
  const w = recorded(2, 0.05, 20);

  it('replicates when the replay calls it improved and the speedups agree', () => {
    expect(judgeWorkload(w, replayed('improved', 1.95, 0.01))).toMatchObject({ outcome: 'replicates' });
    expect(judgeWorkload(w, replayed('improved', 1.95, 0.01)).why).toMatch(
      /^improved: 1\.950x \[.*\], 20\/20 pairs faster \(recorded 2\.000x \[/,
    );
  });

  it('does not replicate when the replay calls it improved by a speedup that disagrees', () => {
    const j = judgeWorkload(w, replayed('improved', 1.3, 0.01));
    expect(j.outcome).toBe('does-not-replicate');
    expect(j.why).toMatch(/improved, but by 1\.300x .* which does not agree with the recorded 2\.000x/);
  });

  it('does not replicate when the replay calls it worsened, cannot compare it, or lacks it', () => {
    expect(judgeWorkload(w, replayed('worsened', 0.8, 0.01)).outcome).toBe('does-not-replicate');
    expect(judgeWorkload(w, replayed('incomparable', 2, 0.01, { reason: 'failed-on-expert' }))).toMatchObject({
      outcome: 'does-not-replicate',
      why: expect.stringContaining('failed-on-expert'),
    });
    expect(judgeWorkload(w, replayed('incomparable', 2, 0.01, { reason: 'benchmark-changed' })).outcome).toBe('does-not-replicate');
    expect(judgeWorkload(w, null)).toMatchObject({
      outcome: 'does-not-replicate',
      why: expect.stringContaining('not in the replayed suite'),
    });
  });

  it('does not replicate when the replay calls it unchanged though it could see the recorded speedup (a placebo)', () => {
    const j = judgeWorkload(w, replayed('unchanged', 1.01, 0.01, { reason: 'not-significant', mds: 1.08 }));
    expect(j.outcome).toBe('does-not-replicate');
    expect(j.why).toContain('though it could see speedups from 1.080x');
  });

  it("names why the verifier's hack checks judged the expert's own patch memoised, with their numbers", () => {
    const detail = memoDetail({
      memoised: true,
      why: 'two-faced: far faster under the harness than under the probe on the same inputs',
      probe_timed: { base: 0.0012345, working: 0.00098765 },
      coverage: 0.87654,
    });
    expect(detail).toBe(
      'two-faced: far faster under the harness than under the probe on the same inputs; {"probe_timed":{"base":0.00123,"working":0.000988},"coverage":0.877}',
    );
    const j = judgeWorkload(w, replayed('unchanged', 1, 0.01, { reason: 'memoised', detail, mds: 1.05 }));
    expect(j.outcome).toBe('does-not-replicate');
    expect(j.why).toContain(`the replay calls it unchanged (memoised: ${detail})`);
    expect(memoDetail(null)).toBeNull();
  });

  it('is inconclusive when the replay could not have seen it (its MDS above the recorded low end), or has too few pairs', () => {
    const small = recorded(1.3, 0.05, 20);
    const low = recordedEstimate(small, 0.95)!.interval[0];
    expect(judgeWorkload(small, replayed('unchanged', 1.2, 0.1, { reason: 'not-significant', mds: low + 0.05 })).outcome).toBe(
      'inconclusive',
    );
    expect(judgeWorkload(small, replayed('unchanged', 1.2, 0.1, { reason: 'not-significant', mds: low - 0.05 })).outcome).toBe(
      'does-not-replicate',
    );
    expect(judgeWorkload(small, replayed('unchanged', 1.2, 0.1, { mds: null })).outcome).toBe('inconclusive');
    expect(judgeWorkload(small, replayed('incomparable', 1.2, 0.1, { reason: 'too-few-pairs', usablePairs: 2 })).outcome).toBe(
      'inconclusive',
    );
  });

  it('replicates on the direction alone when the record has no interval', () => {
    expect(judgeWorkload({ ...w, noise: null }, replayed('improved', 5, 0.01))).toMatchObject({
      outcome: 'replicates',
      why: expect.stringContaining('the direction alone'),
    });
  });
});

describe("a replay's verdict", () => {
  const o = (name: string, outcome: 'replicates' | 'does-not-replicate' | 'inconclusive' | null) => ({ name, outcome, why: '' });

  it('replicates when every judged workload does, with the share; does not when any does not; else inconclusive', () => {
    expect(judgeReplay([o('a', 'replicates'), o('b', 'replicates'), o('c', null)])).toEqual({
      verdict: 'replicates',
      reason: null,
      judged: 2,
      replicated: 2,
      share: 1,
      replicatedWorkloads: ['a', 'b'],
    });
    expect(judgeReplay([o('a', 'replicates'), o('b', 'does-not-replicate'), o('c', 'inconclusive')])).toMatchObject({
      verdict: 'does-not-replicate',
      reason: 'workload-does-not-replicate',
      share: 1 / 3,
    });
    expect(judgeReplay([o('a', 'replicates'), o('b', 'inconclusive')])).toMatchObject({ verdict: 'inconclusive', share: 0.5 });
    expect(judgeReplay([o('a', null)])).toMatchObject({ verdict: 'failed', reason: 'nothing-to-replicate', share: null });
  });
});

/**
 * The rule on simulated measurements, with validate's own rule (applyRule) deciding both the
 * record and the replay: a candidate of six workloads, one made S times faster, noise σ per pair
 * (log-normal), 20 base/expert and 20 base/base pairs, 300 independent record/replay pairs.
 */
describe('the rule on simulated record and replay measurements', () => {
  function gauss(rand: () => number): number {
    const u = 1 - rand();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  }
  function measure(rand: () => number, speedup: number, sigma: number): RuleResult[] {
    const evidence = Array.from({ length: 6 }, (_, i) => ({
      logs: Array.from({ length: 20 }, () => (i === 0 ? -Math.log(speedup) : 0) + sigma * gauss(rand)),
      nullLogs: Array.from({ length: 20 }, () => sigma * gauss(rand)),
      biasLog: 0,
    }));
    return applyRule(evidence, DEFAULT_PAIRED_OPTIONS);
  }
  const asRecorded = (r: RuleResult): RecordedWorkload => ({
    name: 'w0',
    change: r.change,
    normalizedMedian: Math.exp(r.medianLog!),
    noise: r.noiseLog,
    usablePairs: r.pairs,
    mds: r.mdsLog === null ? null : Math.exp(r.mdsLog),
  });
  const asReplayed = (r: RuleResult): ReplayedWorkload => ({
    change: r.change === 'too-few-pairs' ? 'incomparable' : r.change,
    reason: r.change === 'too-few-pairs' ? 'too-few-pairs' : r.reason,
    medianLog: r.medianLog,
    standardError: r.standardError,
    df: r.df,
    mds: r.mdsLog === null ? null : Math.exp(r.mdsLog),
    pValue: r.pValue,
    usablePairs: r.pairs,
    fasterPairs: r.fasterPairs,
  });
  function outcomes(seed: number, truth: { recorded: number; replayed: number }, sigma: number, replaySigma = sigma) {
    const rand = mulberry32(seed);
    const counts = { replicates: 0, 'does-not-replicate': 0, inconclusive: 0, notRecorded: 0 };
    for (let k = 0; k < 300; k++) {
      const rec = measure(rand, truth.recorded, sigma)[0]!;
      const rep = measure(rand, truth.replayed, replaySigma)[0]!;
      if (rec.change !== 'improved') {
        counts.notRecorded++;
        continue;
      }
      counts[judgeWorkload(asRecorded(rec), asReplayed(rep), REPLICATION_RULE).outcome]++;
    }
    return counts;
  }

  it('a real 2x and 1.3x speedup replicate (at most 2% refuted), as does a thousandfold one measured to ±1%', () => {
    for (const [s, sigma, seed] of [
      [2, 0.05, 1],
      [1.3, 0.05, 2],
      [1464, 0.01, 3],
    ] as const) {
      const c = outcomes(seed, { recorded: s, replayed: s }, sigma);
      expect(c.notRecorded, `${s}x`).toBe(0);
      expect(c.replicates, `${s}x: ${JSON.stringify(c)}`).toBeGreaterThanOrEqual(294);
    }
  });

  it('a placebo replayed against a recorded 2x never replicates and is refuted, not inconclusive', () => {
    const c = outcomes(4, { recorded: 2, replayed: 1 }, 0.05);
    expect(c).toEqual({ replicates: 0, 'does-not-replicate': 300, inconclusive: 0, notRecorded: 0 });
  });

  it('a speedup that shrank from 2x to 1.4x on the replay does not replicate', () => {
    const c = outcomes(5, { recorded: 2, replayed: 1.4 }, 0.05);
    expect(c['does-not-replicate']).toBe(300);
  });

  it('a 1.3x speedup replayed on a machine eight times noisier is mostly inconclusive, never refuted by a replay that could not see it', () => {
    const c = outcomes(6, { recorded: 1.3, replayed: 1.3 }, 0.05, 0.4);
    expect(c.replicates + c.inconclusive + c['does-not-replicate']).toBe(300);
    expect(c.inconclusive, JSON.stringify(c)).toBeGreaterThan(150);
    expect(c['does-not-replicate'], JSON.stringify(c)).toBeLessThanOrEqual(6);
  });
});
