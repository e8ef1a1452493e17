import { describe, expect, it } from 'vitest';
import { aggregateByModel, scoreTask, type ScoredPrediction } from '../../../tasks/score/task-score.js';
import { workloadSpeedups } from '../../../pipeline/concepts/asv/metrics.js';

const expert = new Map([
  ['bench.A.time_x', 2],
  ['bench.A.time_y', 8],
  ['bench.B.time_z', 4],
  ['other.time_w', 1],
]);
const agent = new Map([
  ['bench.A.time_x', 4],
  ['bench.A.time_y', 1],
  ['bench.B.time_z', 4],
  ['bench.C.time_q', 3],
]);

describe('scoreTask', () => {
  it('computes speedups, advantage, stratified and normalized advantage by hand', () => {
    const s = scoreTask(agent, expert);
    // common workloads: x, y, z; agent 4, 1, 4 and expert 2, 8, 4
    expect(s.compared).toBe(3);
    expect(s.agentSpeedup).toBeCloseTo(Math.cbrt(16), 12);
    expect(s.expertSpeedup).toBeCloseTo(4, 12);
    expect(s.advantage).toBeCloseTo(Math.cbrt(16) - 4, 12);
    // module: one group (bench); class: bench.A (2 - 4 = -2), bench.B (4 - 4 = 0); function: 2, -7, 0
    expect(s.stratified.module.strata.map((x) => x.key)).toEqual(['bench']);
    expect(s.stratified.module.advantage).toBeCloseTo(Math.cbrt(16) - 4, 12);
    expect(s.stratified.class.strata.map((x) => [x.key, x.advantage])).toEqual([
      ['bench.A', expect.closeTo(-2, 12)],
      ['bench.B', expect.closeTo(0, 12)],
    ]);
    expect(s.stratified.class.advantage).toBeCloseTo(-1, 12);
    expect(s.stratified.function.advantage).toBeCloseTo(-5 / 3, 12);
    // population variances: agent [4,1,4] → 2; expert [2,8,4] → 56/9
    expect(s.normalizedAdvantage).toBeCloseTo((Math.cbrt(16) - 4) / Math.sqrt(2 + 56 / 9), 12);
  });

  it('lists a workload missing on one side and leaves it out', () => {
    const s = scoreTask(agent, expert);
    expect(s.workloads.map((w) => [w.name, w.note])).toEqual([
      ['bench.A.time_x', null],
      ['bench.A.time_y', null],
      ['bench.B.time_z', null],
      ['bench.C.time_q', 'missing-on-expert'],
      ['other.time_w', 'missing-on-agent'],
    ]);
  });

  it('a workload that failed on the agent (null time) is not compared', () => {
    const agentSpeedups = workloadSpeedups(
      new Map([
        ['m.time_a', 1],
        ['m.time_b', 2],
      ]),
      new Map([
        ['m.time_a', 0.5],
        ['m.time_b', null],
      ]),
    );
    const s = scoreTask(
      agentSpeedups,
      new Map([
        ['m.time_a', 4],
        ['m.time_b', 2],
      ]),
    );
    expect(s.compared).toBe(1);
    expect(s.advantage).toBeCloseTo(2 - 4, 12);
    expect(s.workloads.find((w) => w.name === 'm.time_b')?.note).toBe('missing-on-agent');
  });

  it('a single workload: every level gives the same advantage, the normalized one is undefined', () => {
    const s = scoreTask(new Map([['m.K.time_a', 2]]), new Map([['m.K.time_a', 1.5]]));
    expect(s.advantage).toBeCloseTo(0.5, 12);
    expect(s.stratified.module.advantage).toBeCloseTo(0.5, 12);
    expect(s.stratified.class.advantage).toBeCloseTo(0.5, 12);
    expect(s.stratified.function.advantage).toBeCloseTo(0.5, 12);
    expect(s.normalizedAdvantage).toBeNull();
  });

  it('a failed prediction is scored as the unchanged repository (speedup 1 everywhere)', () => {
    const s = scoreTask(
      null,
      new Map([
        ['m.time_a', 2],
        ['m.time_b', 8],
      ]),
    );
    expect(s.agentSpeedup).toBe(1);
    expect(s.expertSpeedup).toBeCloseTo(4, 12);
    expect(s.advantage).toBeCloseTo(-3, 12);
    // var(agent) = 0, var(expert [2, 8]) = 9
    expect(s.normalizedAdvantage).toBeCloseTo(-1, 12);
  });

  it('no common workload gives null metrics', () => {
    const s = scoreTask(new Map([['a.time_x', 2]]), new Map([['b.time_y', 2]]));
    expect(s.compared).toBe(0);
    expect([s.agentSpeedup, s.expertSpeedup, s.advantage, s.normalizedAdvantage, s.stratified.class.advantage]).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
  });
});

describe('aggregateByModel', () => {
  it('averages per model and counts passes, failures and wins over the expert', () => {
    const e = new Map([['m.time_a', 2]]);
    const rows: ScoredPrediction[] = [
      { model: 'b-model', instanceId: 't-1', failure: null, score: scoreTask(new Map([['m.time_a', 3]]), e) },
      { model: 'b-model', instanceId: 't-2', failure: 'tests-regressed', score: scoreTask(null, e) },
      { model: 'a-model', instanceId: 't-1', failure: 'patch-does-not-apply', score: scoreTask(null, e) },
      { model: 'a-model', instanceId: 't-2', failure: 'invalid-prediction', score: null },
    ];
    const [a, b] = aggregateByModel(rows);
    expect(a).toMatchObject({ model: 'a-model', tasks: 2, passed: 0, failed: 2, beatExpert: 0 });
    expect(a!.meanAdvantage).toBeCloseTo(-1, 12);
    expect(b).toMatchObject({ model: 'b-model', tasks: 2, passed: 1, failed: 1, beatExpert: 1 });
    // advantages 3 - 2 = 1 and 1 - 2 = -1; agent speedups 3 and 1
    expect(b!.meanAdvantage).toBeCloseTo(0, 12);
    expect(b!.meanAgentSpeedup).toBeCloseTo(2, 12);
    expect(b!.meanExpertSpeedup).toBeCloseTo(2, 12);
    expect(b!.meanNormalizedAdvantage).toBeNull();
  });
});
