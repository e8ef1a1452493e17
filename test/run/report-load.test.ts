import { describe, expect, it } from 'vitest';
import { openStore } from '../../cache/store.js';
import { Ledger } from '../../cache/ledger.js';
import { finishRun, startRun } from '../../cache/runs.js';
import { repoFunnel, stageCosts } from '../../pipeline/report/load.js';
import { monthWindow } from '../../pipeline/window.js';

const window = monthWindow('2025-04');

function seed() {
  const db = openStore(':memory:');
  const ledger = new Ledger(db);
  const item = (key: string, repo: string, at: string | null = '2025-04-10T00:00:00Z') => ({ key, repo, at, inputHash: 'h' });
  const done = (stage: string, key: string, repo: string, output: unknown = {}, at?: string | null) =>
    ledger.complete(stage, 1, item(key, repo, at), { status: 'done', reason: null, detail: null, output }, null);
  const dropped = (stage: string, key: string, repo: string, reason: string) =>
    ledger.complete(stage, 1, item(key, repo), { status: 'dropped', reason, detail: null, output: undefined }, null);
  for (const n of [1, 2, 3, 4]) done('collect', `a/x#${n}`, 'a/x');
  done('collect', 'b/y#9', 'b/y');
  done('collect', 'a/x#7', 'a/x', {}, '2025-05-02T00:00:00Z'); // another month
  for (const n of [1, 2, 3]) done('filter', `a/x#${n}`, 'a/x');
  dropped('filter', 'a/x#4', 'a/x', 'negative-message');
  dropped('filter', 'b/y#9', 'b/y', 'no-core-files');
  const classified = (n: number, base: string) => ({
    repo: 'a/x',
    number: n,
    baseSha: base,
    mergeSha: `m${n}`,
    mergedAt: '2025-04-10T00:00:00Z',
    contentHash: 'c',
    classifier: 'heuristic',
    reasoning: '',
    category: null,
    difficulty: null,
    problemStatement: '',
  });
  done('classify', 'a/x#1', 'a/x', classified(1, 'base1'));
  done('classify', 'a/x#2', 'a/x', classified(2, 'base2'));
  dropped('classify', 'a/x#3', 'a/x', 'not-performance');
  done('synthesize', 'a/x@base1', 'a/x');
  ledger.fail('synthesize', 1, item('a/x@base2', 'a/x'), { kind: 'item', reason: 'no-verified-script', message: 'x' }, null);
  done('validate', 'a/x#1', 'a/x');
  done('emit', 'a/x#1', 'a/x');
  return { db, ledger };
}

describe('report data', () => {
  it('follows each pull request of the month through the funnel, per repository', () => {
    const { ledger } = seed();
    const rows = Object.fromEntries(repoFunnel(ledger, window).map((r) => [r.repo, r.counts]));
    expect(rows).toEqual({
      'a/x': { collected: 4, filtered: 3, classified: 2, built: 1, validated: 1, emitted: 1 },
      'b/y': { collected: 1, filtered: 0, classified: 0, built: 0, validated: 0, emitted: 0 },
    });
  });

  it("sums time per stage over the month's runs and LLM use per stage from the call log", () => {
    const { db, ledger } = seed();
    const run = startRun(db, { command: 'run', args: {}, windowLabel: '2025-04' });
    finishRun(db, run, 'succeeded', 0, {
      stages: [
        { stage: 'classify', durationMs: 1500 },
        { stage: 'synthesize', durationMs: 60_000 },
      ],
    });
    const other = startRun(db, { command: 'run', args: {}, windowLabel: '2025-05' });
    finishRun(db, other, 'succeeded', 0, { stages: [{ stage: 'classify', durationMs: 999_999 }] });
    const call =
      db.prepare(`INSERT INTO llm_calls (run_id, item, prompt, model, purpose, outcome, prompt_tokens, completion_tokens, cost_usd, duration_ms, created_at)
      VALUES (?, ?, ?, 'm', 'answer', 'ok', ?, ?, ?, 10, 'now')`);
    call.run(run, 'a/x#1', 'perf-intent', 100, 20, 0.01);
    call.run(run, 'a/x#2', 'problem-extract', 200, 50, 0.02);
    call.run(run, 'a/x@base1', 'build-agent', 1000, 300, 0.1);
    call.run(run, 'z/z#1', 'perf-intent', 5, 5, 5); // not an item of this month
    const costs = Object.fromEntries(stageCosts(db, ledger, window).map((c) => [c.stage, c]));
    expect(costs.classify).toEqual({
      stage: 'classify',
      durationMs: 1500,
      llmRequests: 2,
      llmTokens: 370,
      llmCostUsd: expect.closeTo(0.03, 10),
    });
    expect(costs.synthesize).toEqual({
      stage: 'synthesize',
      durationMs: 60_000,
      llmRequests: 1,
      llmTokens: 1300,
      llmCostUsd: expect.closeTo(0.1, 10),
    });
  });
});
