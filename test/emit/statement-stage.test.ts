import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { improvedWorkloads } from '../../cache/improved-workloads.js';
import { openStore, type Db } from '../../cache/store.js';
import { loadPrompt } from '../../pipeline/prompts.js';
import { runStage } from '../../pipeline/runner.js';
import type { PipelineContext } from '../../pipeline/stage.js';
import { MEASURED_WORKLOADS_SLOT } from '../../pipeline/concepts/records/classify-output.js';
import { renderProblemStatement } from '../../stages/classify/problem-statement.js';
import { createEmitStage } from '../../stages/emit/index.js';
import { taskRowSchema } from '../../stages/emit/row.js';
import { createValidateStage } from '../../stages/validate/index.js';
import { runCli } from '../helpers/cli.js';
import { monthScope, testConfig, testContext } from '../helpers/context.js';
import { storeCandidate } from '../validate/stage/candidate.js';
import { FakeRunner } from '../validate/stage/fake-runner.js';
import { fakeSealedSources } from './fake-sealed-sources.js';

const emitStage = createEmitStage(fakeSealedSources);

/**
 * The emit stage and problem statements, after validate (the container seam serving the real rich
 * #3399 runs with planted 2x speedups): an LLM statement that passes the leak check is emitted as
 * classify wrote it; one that names an identifier the patch adds is dropped as
 * `statement-leaks-solution` (shown by `perfmine status --stage emit --items`); a rules-only one
 * gets the measured improved workloads.
 */
const scratch = mkdtempSync(join(tmpdir(), 'perfmine-statement-'));
const dbPath = join(scratch, 'perfmine.db');
const out = join(scratch, 'out');
const month = join(out, '2025-04');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const IMPROVED = ['benchmarks.PrettySuite.time_pretty', 'benchmarks.TextSuite.time_divide_unicode_heavy'];
const FAST = { expert: { names: new Set(IMPROVED), factor: 0.5 } };
const LEAKY_DIFF = [
  'diff --git a/fastlib/core.py b/fastlib/core.py',
  '--- a/fastlib/core.py',
  '+++ b/fastlib/core.py',
  '@@ -1,3 +1,4 @@ def group_sum(keys, values):',
  '-    for k in keys: out[k] += v',
  '+    _GROUP_TOTALS = np.bincount(keys, weights=values)',
  '+    return _GROUP_TOTALS',
  '',
].join('\n');

let db: Db;
let ctx: PipelineContext;

beforeAll(async () => {
  db = openStore(dbPath);
  storeCandidate(db, { number: 201 });
  storeCandidate(
    db,
    { number: 202, baseSha: 'd'.repeat(40), diff: LEAKY_DIFF },
    { problemStatement: '# Task\n\nSumming by group is slow; keeping _GROUP_TOTALS would fix it.\n' },
  );
  const template = loadPrompt('problem-statement');
  const rulesOnly = renderProblemStatement(template, {
    repo: 'acme/fastlib',
    repositoryDescription: '`acme/fastlib`',
    observations: [MEASURED_WORKLOADS_SLOT],
    issues: [],
  });
  storeCandidate(
    db,
    { number: 203, baseSha: 'e'.repeat(40) },
    {
      classifier: 'heuristic',
      problemSource: 'measured',
      problemStatement: rulesOnly,
      category: 'use_lower_level_system',
      difficulty: 'easy',
      categoryModel: 'heuristic',
      categoryReason: 'heuristic (--llm none): a Python loop replaced by NumPy calls',
    },
  );
  ctx = testContext(db, { config: testConfig({ out }) });
  expect(
    await runStage(
      ctx,
      createValidateStage(() => new FakeRunner(FAST)),
      monthScope('2025-04'),
    ),
  ).toMatchObject({ done: 3 });
  expect(await runStage(ctx, emitStage, monthScope('2025-04'))).toMatchObject({
    planned: 3,
    done: 2,
    dropped: { 'statement-leaks-solution': 1 },
  });
});
afterAll(() => db.close());

describe('emit: problem statements', () => {
  it('reads the improved workloads through improvedWorkloads()', () => {
    const improved = improvedWorkloads(db, 'acme/fastlib#203');
    expect(improved.map((w) => w.name)).toEqual(IMPROVED);
    for (const w of improved)
      expect(w).toMatchObject({
        params: null,
        unit: 'seconds',
        speedup: expect.any(Number) as number,
        baseMedian: expect.any(Number) as number,
      });
  });

  it('drops a statement that names an identifier the patch adds, with the reason and what leaked, shown by perfmine status', async () => {
    expect(ctx.ledger.get('emit', 'acme/fastlib#202')).toMatchObject({
      status: 'dropped',
      reason: 'statement-leaks-solution',
      detail: 'the statement names the solution: identifier `_GROUP_TOTALS`',
    });
    expect(readdirSync(month).filter((n) => n.includes('__'))).toEqual(['acme__fastlib-201', 'acme__fastlib-203']);
    const status = await runCli(['--json', 'status', '--db', dbPath, '--month', '2025-04', '--stage', 'emit', '--items']);
    expect(status.code).toBe(0);
    const items = (JSON.parse(status.stdout) as { items: { key: string; status: string; reason: string | null }[] }).items.map((i) => [
      i.key,
      i.status,
      i.reason,
    ]);
    expect(items).toEqual([
      ['acme/fastlib#201', 'done', null],
      ['acme/fastlib#202', 'dropped', 'statement-leaks-solution'],
      ['acme/fastlib#203', 'done', null],
    ]);
  });

  it('emits a statement that passes as classify wrote it, and a rules-only one with the measured workloads in the slot', () => {
    const rows = readFileSync(join(month, 'tasks.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => taskRowSchema.parse(JSON.parse(l)));
    expect(rows.map((r) => r.instance_id)).toEqual(['acme__fastlib-201', 'acme__fastlib-203']);
    expect(rows[0]!.problem_statement).toBe('# Speed up PERF: speed up groupby sum\n\nSumming by group is slow.\n');
    const statement = rows[1]!.problem_statement;
    expect(statement).not.toContain(MEASURED_WORKLOADS_SLOT);
    expect(statement).toContain('| workload | parameters | at this commit | reference speedup |');
    for (const name of IMPROVED)
      expect(statement).toMatch(new RegExp(`\\| \`${name.replace(/\./g, '\\.')}\` \\|  \\| [\\d.]+ (?:ns|µs|ms|s) \\| [\\d.]+x \\|`));
    expect(readFileSync(join(month, 'acme__fastlib-203', 'problem_statement.md'), 'utf8')).toBe(statement);
    const meta = JSON.parse(readFileSync(join(month, 'acme__fastlib-203', 'metadata.json'), 'utf8')) as Record<string, unknown>;
    expect(meta).toMatchObject({
      category: 'use_lower_level_system',
      category_source: 'heuristic',
      category_reason: 'heuristic (--llm none): a Python loop replaced by NumPy calls',
      problem_statement: { source: 'measured', leak_check: 'diff' },
    });
  });
});
