import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../cache/store.js';
import { runStage } from '../../pipeline/runner.js';
import { createEmitStage } from '../../stages/emit/index.js';
import { createValidateStage } from '../../stages/validate/index.js';
import { runCli } from '../helpers/cli.js';
import { monthScope, testConfig, testContext } from '../helpers/context.js';
import { fakeSealedSources } from '../emit/fake-sealed-sources.js';
import { storeCandidate } from '../validate/stage/candidate.js';
import { FakeRunner } from '../validate/stage/fake-runner.js';

/**
 * What the month's tasks cost, through the real CLI: `perfmine status --month` (text and JSON),
 * `perfmine report` and the dataset card of `perfmine publish` show the same figures. April has
 * #101 (emitted) and #103 (dropped: the expert does not build) on base commit A, and #102
 * (emitted) on D; validate and emit ran (the container seam stands in for Docker), then the
 * recorded times and costs are set to known values.
 */
const scratch = mkdtempSync(join(tmpdir(), 'perfmine-costs-'));
const dbPath = join(scratch, 'perfmine.db');
const out = join(scratch, 'out');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const A = 'a'.repeat(40);
const D = 'd'.repeat(40);
const MIN = 60_000;
const FAST = {
  expert: { names: new Set(['benchmarks.TextSuite.time_divide_unicode_heavy', 'benchmarks.PrettySuite.time_pretty']), factor: 0.5 },
};

let recorded: { key: string; decision: string; durationMs: number; expertBuildMs: number | null }[] = [];

beforeAll(async () => {
  const db = openStore(dbPath);
  storeCandidate(db, { number: 101 });
  storeCandidate(db, { number: 102, baseSha: D, mergedAt: '2025-04-20T08:00:00Z', title: 'PERF: faster join' });
  storeCandidate(db, { number: 103, mergedAt: '2025-04-21T08:00:00Z', title: 'PERF: faster split' });
  const ctx = testContext(db, { config: testConfig({ out }) });
  const fake = new FakeRunner(FAST, { 'acme/fastlib#103': { build: 'build-fails' } });
  await runStage(
    ctx,
    createValidateStage(() => fake),
    monthScope('2025-04'),
  );
  await runStage(ctx, createEmitStage(fakeSealedSources), monthScope('2025-04'));
  // validate records its wall time and the expert build's (the seam says 1000 ms) in its output
  recorded = db
    .prepare<[], { key: string; output: string }>("SELECT key, output FROM stage_items WHERE stage = 'validate' ORDER BY key")
    .all()
    .map((r) => ({ key: r.key, ...(JSON.parse(r.output) as { decision: string; durationMs: number; expertBuildMs: number | null }) }));
  // replace the (fake-fast) wall times with known figures
  const setMs = db.prepare("UPDATE stage_items SET output = json_set(output, '$.durationMs', ?) WHERE stage = 'validate' AND key = ?");
  setMs.run(3 * MIN, 'acme/fastlib#101');
  setMs.run(1.5 * MIN, 'acme/fastlib#102');
  setMs.run(1 * MIN, 'acme/fastlib#103');
  const attempt = db.prepare(
    `INSERT INTO build_attempts (repo, sha, commit_date, script, script_hash, source, outcome, duration_ms, cost_usd,
       base_image, toolchain_image, repo_image, clone_source, created_at)
     VALUES ('acme/fastlib', ?, '2025-04-01T00:00:00Z', 's', 'h', 'agent', ?, ?, 0, 'b', 't', 'r', 'git:/x', 'now')`,
  );
  attempt.run(A, 'failed', 2 * MIN);
  attempt.run(A, 'verified', 4 * MIN);
  attempt.run(D, 'verified', 3 * MIN);
  const call = db.prepare(
    `INSERT INTO llm_calls (run_id, item, prompt, model, purpose, outcome, prompt_tokens, completion_tokens, cost_usd, duration_ms, created_at)
     VALUES (1, ?, ?, 'm', 'answer', 'ok', 10, 10, ?, 10, 'now')`,
  );
  call.run('acme/fastlib#101', 'perf-intent', 0.02);
  call.run('acme/fastlib#103', 'perf-intent', 0.01);
  call.run(`acme/fastlib@${A}`, 'build-agent', 0.4);
  db.close();
}, 120_000);

describe("the month's cost per task", () => {
  it("validate records each candidate's machine time and its expert build's, kept or dropped", () => {
    expect(recorded.map((r) => [r.key, r.decision, r.expertBuildMs])).toEqual([
      ['acme/fastlib#101', 'kept', 1000],
      ['acme/fastlib#102', 'kept', 1000],
      ['acme/fastlib#103', 'expert-build-failed', 1000],
    ]);
    for (const r of recorded) expect(r.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('perfmine status --month shows the totals, per emitted task, direct and each task (text)', async () => {
    const r = await runCli(['status', '--db', dbPath, '--month', '2025-04']);
    expect(r.code, r.stderr).toBe(0);
    // builds 6 + 3 min, measurement 3 + 1.5 + 1 min; LLM $0.02 + $0.01 + $0.40
    expect(r.stdout).toMatch(/all work of 2025-04 \(3 candidates, 2 base commits\)\s+9\.00\s+5\.50\s+0\.00\s+14\.50\s+\$0\.4300/);
    expect(r.stdout).toMatch(/per emitted task \(the total \/ 2\)\s+4\.50\s+2\.75\s+0\.00\s+7\.25\s+\$0\.2150/);
    expect(r.stdout).toMatch(/direct, per task \(mean of its own\)\s+3\.00\s+2\.25\s+0\.00\s+5\.25\s+\$0\.1100/);
    expect(r.stdout).toMatch(/acme__fastlib-101 \(builds shared by 2\)\s+3\.00\s+3\.00\s+0\.00\s+6\.00\s+\$0\.2200/);
    expect(r.stdout).toMatch(/acme__fastlib-102\s+3\.00\s+1\.50\s+0\.00\s+4\.50\s+\$0\n/);
    expect(r.stdout).toContain('LLM answers served from the cache cost $0');
    // without a month there is no month to cost
    const all = await runCli(['status', '--db', dbPath]);
    expect(all.stdout).not.toContain('tasks cost');
  });

  it('perfmine status --month --json carries the same figures', async () => {
    const r = await runCli(['status', '--db', dbPath, '--month', '2025-04', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const { costs } = JSON.parse(r.stdout) as {
      costs: {
        emitted: number;
        total: { machineMinutes: number; buildMinutes: number; measureMinutes: number; replayMinutes: number; llmUsd: number };
        perEmittedTask: { machineMinutes: number; llmUsd: number };
        directPerTask: { machineMinutes: number; llmUsd: number };
        tasks: { instanceId: string; sharedBy: number; machineMinutes: number; llmUsd: number }[];
      };
    };
    expect(costs.emitted).toBe(2);
    expect(costs.total).toMatchObject({ buildMinutes: 9, measureMinutes: 5.5, replayMinutes: 0, machineMinutes: 14.5 });
    expect(costs.total.llmUsd).toBeCloseTo(0.43, 10);
    expect(costs.perEmittedTask.machineMinutes).toBeCloseTo(7.25, 10);
    expect(costs.perEmittedTask.llmUsd).toBeCloseTo(0.215, 10);
    expect(costs.directPerTask.machineMinutes).toBeCloseTo(5.25, 10);
    expect(costs.tasks.map((t) => [t.instanceId, t.sharedBy, t.machineMinutes])).toEqual([
      ['acme__fastlib-101', 2, 6],
      ['acme__fastlib-102', 1, 4.5],
    ]);
  });

  it('the report shows the same figures', async () => {
    const page = join(scratch, 'report.html');
    const r = await runCli(['report', '--db', dbPath, '--month', '2025-04', '--out', page]);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(page, 'utf8');
    expect(html).toContain('<h2>What the tasks cost</h2>');
    expect(html).toMatch(/id="card-cost-per-task" data-minutes="7.25" data-usd="0.215\d*"><b>7.25 min, \$0.2150<\/b>per emitted task/);
    const row = (id: string) => new RegExp(`<tr data-row="${id}">(.*?)</tr>`).exec(html)?.[1] ?? '';
    expect(row('total')).toContain('data-col="machine" data-minutes="14.5">14.50<');
    expect(row('total')).toContain('data-col="builds" data-minutes="9">9.00<');
    expect(row('per-emitted-task')).toContain('data-col="machine" data-minutes="7.25">7.25<');
    expect(row('per-emitted-task')).toContain('>$0.2150<');
    expect(row('direct-per-task')).toContain('data-col="machine" data-minutes="5.25">5.25<');
    expect(row('acme__fastlib-101')).toContain('data-col="measurement" data-minutes="3">3.00<');
    expect(row('acme__fastlib-102')).toContain('data-col="machine" data-minutes="4.5">4.50<');
    expect(html).toContain('costs $0');
  });

  it('the dataset card says what the tasks cost, per month and per task', async () => {
    const dataset = join(scratch, 'dataset');
    const r = await runCli(['publish', '--db', dbPath, '--to', dataset, '--min-replays', '0']);
    expect(r.code, r.stderr).toBe(0);
    const readme = readFileSync(join(dataset, 'README.md'), 'utf8');
    expect(readme).toContain('## What the tasks cost');
    expect(readme).toContain("an answer served from perfmine's LLM cache costs $0");
    expect(readme).toContain('| 2025-04 | 2 | 14.50 (9.00 / 5.50 / 0.00) | $0.4300 | 7.25 min, $0.2150 | 5.25 min, $0.1100 |');
    expect(readme).toContain('| acme__fastlib-101 | 3.00 | 3.00 | 0.00 | 6.00 | $0.2200 |');
    expect(readme).toContain('| acme__fastlib-102 | 3.00 | 1.50 | 0.00 | 4.50 | $0 |');
  });
});
