import { describe, expect, it } from 'vitest';
import { Ledger } from '../../cache/ledger.js';
import { openStore } from '../../cache/store.js';
import {
  formatMinutes,
  formatUsd,
  monthCosts,
  replayMachineMs,
  unrecordedNote,
  type CandidateCostInput,
} from '../../pipeline/concepts/task-costs.js';
import { costInputs, loadMonthCosts } from '../../pipeline/report/costs.js';
import { A, B, D, MIN, seedCostStore } from './cost-store.js';

/**
 * What a task cost to make (issue 30 item 4): the model (pipeline/concepts/task-costs.ts) on
 * inputs, then on a real SQLite store seeded with ledger rows, build attempts, LLM calls and
 * validations (pipeline/report/costs.ts).
 */

function candidate(over: Partial<CandidateCostInput> & { key: string }): CandidateCostInput {
  return { month: '2025-04', commit: null, instanceId: null, llmUsd: 0, measureMs: 0, replayMs: [], ...over };
}

describe('the cost model', () => {
  it("shares a commit's builds equally among its candidates, across months; an unclaimed commit counts in whole to its month", () => {
    const candidates = [
      candidate({ key: 'o/r#1', commit: 'o/r@a', instanceId: 'o__r-1', llmUsd: 0.01, measureMs: 2 * MIN }),
      candidate({ key: 'o/r#2', commit: 'o/r@a', llmUsd: 0.02, measureMs: 1 * MIN }), // dropped by validate
      candidate({ key: 'o/r#3', commit: 'o/r@a', month: '2025-05', instanceId: 'o__r-3', measureMs: MIN }), // another month
      candidate({ key: 'o/r#4', llmUsd: 0.005 }), // classify said no: its LLM calls only
    ];
    const commits = [
      { key: 'o/r@a', month: '2025-04', attempts: 3, buildMs: 6 * MIN, llmUsd: 0.3 },
      { key: 'o/r@z', month: '2025-04', attempts: 1, buildMs: 1.5 * MIN, llmUsd: 0.1 }, // nobody claims it
      { key: 'o/r@y', month: '2025-05', attempts: 1, buildMs: 9 * MIN, llmUsd: 0 },
    ];
    const april = monthCosts('2025-04', candidates, commits);
    // builds: 2 of 3 shares of o/r@a (4 min) + o/r@z whole (1.5 min); measurement 3 min
    expect(april.total.buildMinutes).toBeCloseTo(5.5, 10);
    expect(april.total.measureMinutes).toBeCloseTo(3, 10);
    expect(april.total.replayMinutes).toBe(0);
    expect(april.total.machineMinutes).toBeCloseTo(8.5, 10);
    expect(april.total.llmUsd).toBeCloseTo(0.01 + 0.02 + 0.005 + 0.2 + 0.1, 10);
    expect(april).toMatchObject({ month: '2025-04', emitted: 1, candidates: 3, commits: 2 });
    // the honest figure: all of it over the one emitted task; the direct one: its own share
    expect(april.perEmittedTask!.machineMinutes).toBeCloseTo(8.5, 10);
    expect(april.tasks).toHaveLength(1);
    expect(april.tasks[0]).toMatchObject({ key: 'o/r#1', instanceId: 'o__r-1', sharedBy: 3, replays: 0 });
    expect(april.tasks[0]!.buildMinutes).toBeCloseTo(2, 10);
    expect(april.tasks[0]!.measureMinutes).toBeCloseTo(2, 10);
    expect(april.tasks[0]!.llmUsd).toBeCloseTo(0.01 + 0.1, 10);
    expect(april.directPerTask!.machineMinutes).toBeCloseTo(4, 10);

    const may = monthCosts('2025-05', candidates, commits);
    expect(may.total.buildMinutes).toBeCloseTo(2 + 9, 10);
    expect(may.tasks.map((t) => t.instanceId)).toEqual(['o__r-3']);
    // every minute and dollar of the store lands in exactly one month
    const june = monthCosts('2025-06', candidates, commits);
    expect(june).toMatchObject({ emitted: 0, candidates: 0, commits: 0, perEmittedTask: null, directPerTask: null, tasks: [] });
    expect(april.total.buildMinutes + may.total.buildMinutes).toBeCloseTo((6 + 1.5 + 9) * 1, 10);
    expect(april.total.llmUsd + may.total.llmUsd).toBeCloseTo(0.035 + 0.3 + 0.1, 10);
  });

  it('counts replays (none yet: 0) and formats minutes and dollars', () => {
    expect(replayMachineMs([])).toBe(0);
    expect(replayMachineMs([MIN, 2 * MIN])).toBe(3 * MIN);
    const c = monthCosts('2025-04', [candidate({ key: 'o/r#1', instanceId: 'o__r-1', replayMs: [MIN, MIN] })], []);
    expect(c.tasks[0]).toMatchObject({ replays: 2, replayMinutes: 2, machineMinutes: 2 });
    // a validation made before its time was recorded counts 0, and is named
    const legacy = monthCosts('2025-04', [candidate({ key: 'o/r#1', instanceId: 'o__r-1', measureMs: null })], []);
    expect(legacy).toMatchObject({ unrecorded: 1, candidates: 1 });
    expect(unrecordedNote(legacy)).toMatch(/^1 candidate was validated before perfmine recorded/);
    expect(unrecordedNote(c)).toBeNull();
    expect(formatMinutes(0.5)).toBe('0.50 min');
    expect(formatMinutes(12.345)).toBe('12.3 min');
    expect(formatUsd(0)).toBe('$0');
    expect(formatUsd(0.01234)).toBe('$0.0123');
    expect(formatUsd(20.5)).toBe('$20.50');
  });
});

describe('the month costs, from a store', () => {
  const db = openStore(':memory:');
  seedCostStore(db);

  it('reads every candidate and base commit with their recorded figures', () => {
    const { candidates, commits } = costInputs(db);
    const byKey = Object.fromEntries(candidates.map((c) => [c.key, c]));
    expect(Object.keys(byKey).sort()).toEqual(['acme/fastlib#1', 'acme/fastlib#2', 'acme/fastlib#3', 'acme/fastlib#4', 'acme/fastlib#9']);
    expect(byKey['acme/fastlib#1']).toMatchObject({ month: '2025-04', commit: `acme/fastlib@${A}`, instanceId: 'acme__fastlib-1' });
    expect(byKey['acme/fastlib#1']!.llmUsd).toBeCloseTo(0.03, 10);
    expect(byKey['acme/fastlib#3']).toMatchObject({ measureMs: 1.5 * MIN, llmUsd: 0, instanceId: 'acme__fastlib-3' });
    expect(byKey['acme/fastlib#4']).toMatchObject({ commit: null, instanceId: null, measureMs: 0 });
    expect(byKey['acme/fastlib#9']).toMatchObject({ month: '2025-05', commit: `acme/fastlib@${A}` });
    const commit = Object.fromEntries(commits.map((c) => [c.key.slice(-4), c]));
    expect(commit[A.slice(-4)]).toMatchObject({ month: '2025-04', attempts: 2, buildMs: 6 * MIN });
    expect(commit[A.slice(-4)]!.llmUsd).toBeCloseTo(0.6, 10);
    expect(commit[B.slice(-4)]).toMatchObject({ attempts: 2, buildMs: 3 * MIN, llmUsd: 0.06 });
    expect(commit[D.slice(-4)]).toMatchObject({ attempts: 1, buildMs: 0.5 * MIN, llmUsd: 0 });
  });

  it("gives April's totals (dropped work included), per emitted task and each task's own", () => {
    const c = loadMonthCosts(db, '2025-04');
    // A (6 min, $0.60) is shared by #1, #2 and May's #9: April carries 2/3; B whole; D unclaimed, whole
    expect(c).toMatchObject({ month: '2025-04', emitted: 2, candidates: 4, commits: 3 });
    expect(c.total.buildMinutes).toBeCloseTo(4 + 3 + 0.5, 10);
    expect(c.total.measureMinutes).toBeCloseTo(3 + 1 + 1.5, 10);
    expect(c.total.machineMinutes).toBeCloseTo(13, 10);
    expect(c.total.llmUsd).toBeCloseTo(0.03 + 0.01 + 0.01 + 0.4 + 0.06, 10);
    expect(c.perEmittedTask!.machineMinutes).toBeCloseTo(6.5, 10);
    expect(c.perEmittedTask!.llmUsd).toBeCloseTo(0.255, 10);
    const [one, three] = c.tasks;
    expect(one).toMatchObject({ instanceId: 'acme__fastlib-1', sharedBy: 3 });
    expect(one!.buildMinutes).toBeCloseTo(2, 10);
    expect(one!.measureMinutes).toBeCloseTo(3, 10);
    expect(one!.llmUsd).toBeCloseTo(0.03 + 0.2, 10);
    expect(three).toMatchObject({ instanceId: 'acme__fastlib-3', sharedBy: 1, buildMinutes: 3, measureMinutes: 1.5, llmUsd: 0.06 });
    expect(c.directPerTask!.machineMinutes).toBeCloseTo((5 + 4.5) / 2, 10);

    const may = loadMonthCosts(db, '2025-05');
    expect(may).toMatchObject({ emitted: 1, candidates: 1, commits: 1 });
    expect(may.total.machineMinutes).toBeCloseTo(2 + 2, 10);
    expect(may.total.llmUsd).toBeCloseTo(0.03 + 0.2, 10);
  });

  it('an empty store, or one without the tables of later migrations, costs nothing', () => {
    const empty = openStore(':memory:');
    expect(loadMonthCosts(empty, '2025-04')).toMatchObject({ emitted: 0, candidates: 0, perEmittedTask: null, tasks: [] });
    empty.exec(
      'DROP TABLE build_attempts; DROP TABLE llm_calls; DROP TABLE invocations; DROP TABLE workload_verdicts; DROP TABLE harness_batches',
    );
    empty.exec('DROP TABLE validations');
    expect(loadMonthCosts(empty, '2025-04').total.machineMinutes).toBe(0);
    // a validate output without a recorded time, and no validations row to fall back on
    new Ledger(empty).complete(
      'validate',
      1,
      { key: 'o/r#7', repo: 'o/r', at: '2025-04-02T00:00:00.000Z', inputHash: 'h' },
      { status: 'done', reason: null, detail: null, output: { decision: 'kept' } },
      null,
    );
    expect(loadMonthCosts(empty, '2025-04')).toMatchObject({ unrecorded: 1, candidates: 1 });
  });
});
