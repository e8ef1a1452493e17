import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScoreStore } from '../../../cache/scores.js';
import { openStore, type Db } from '../../../cache/store.js';
import { loadConfig } from '../../../pipeline/config/load.js';
import { createContext } from '../../../pipeline/context.js';
import { readCredentials } from '../../../pipeline/credentials.js';
import { createSampleRepo, type SampleRepo } from '../../../pipeline/demo/sample-repo.js';
import { Metrics } from '../../../pipeline/metrics.js';
import { runPipeline } from '../../../pipeline/orchestrate.js';
import { DockerService } from '../../../pipeline/services/docker.js';
import { monthWindow } from '../../../pipeline/window.js';
import { runScore, type ScoreRun } from '../../../pipeline/cli/commands/score.js';
import type { PredictionResult } from '../../../tasks/score/index.js';
import { BIN, cleanEnv } from '../../helpers/cli.js';
import { memoryLogger, tempDir, testLabel } from '../../synthesize/harness.js';
import { measurementSlot } from '../../helpers/measure-slot.js';

/**
 * Issue 16's must-show for `perfmine score`, on the real Docker engine, every side through the
 * Harbor verifier in the task's environment (issue 35: the rules of every reward perfmine gives are
 * the Harbor verifier's): the sample repository's #101 (fib made iterative, about 1000x on
 * time_fib) through every stage with a short protocol (3 rounds, the minimum; workers not pinned),
 * then scored as an agent's task: the expert's own patch, an empty patch, a patch that breaks a
 * test, one that changes a benchmark's return value (and passes the tests), and one that does not
 * apply. A second run of the same predictions measures nothing. A shared 2-core machine: the
 * assertions are on effects far from the noise (never exact numbers).
 */
measurementSlot('shared');
const REPO = 'fixture/fastmath';
const BASE_IMAGE = 'perfmine/base:bookworm';
const label = testLabel('score');
const metrics = new Metrics();
const docker = new DockerService({ runLabel: label, metrics });
const dir = tempDir('score');
const out = join(dir, 'out');
const dbPath = join(dir, 'perfmine.db');
const configPath = join(dir, 'perfmine.config.json');
const { log, lines } = memoryLogger('info');
const ID = 'fixture__fastmath-101';

let sample: SampleRepo;
let db: Db;
let first: ScoreRun;
let single: ScoreRun;
const patches: Record<string, string> = {};

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' });
}

/** A patch of the base commit's core.py, made with git. */
function patchOf(base: string, edit: (core: string) => string): string {
  const wt = join(dir, `wt-${Object.keys(patches).length}`);
  git(sample.path, ['worktree', 'add', '-q', '--detach', wt, base]);
  const file = join(wt, 'fastmath/core.py');
  writeFileSync(file, edit(readFileSync(file, 'utf8')));
  const diff = git(wt, ['diff']);
  git(sample.path, ['worktree', 'remove', '--force', wt]);
  return diff;
}

const byModel = (run: ScoreRun, model: string): PredictionResult => run.rows.find((r) => r.model_name_or_path === model)!;
/** The agent side's stored result (pairs measured, protocol, workloads) of a model's prediction. */
function storedSide(model: string): unknown {
  const store = openStore(dbPath, { readonly: true });
  try {
    const row = store
      .prepare<[string], { result: string }>("SELECT result FROM score_results WHERE side = 'agent' AND model = ?")
      .get(model);
    return row ? (JSON.parse(row.result) as unknown) : null;
  } finally {
    store.close();
  }
}

beforeAll(async () => {
  sample = createSampleRepo(join(dir, 'fastmath'), '2025-04');
  writeFileSync(
    configPath,
    JSON.stringify({
      db: dbPath,
      out,
      logLevel: 'info',
      logFormat: 'json',
      llm: { mode: 'none' },
      docker: { baseImage: BASE_IMAGE, cpus: 1, memoryMb: 2048, pidsLimit: 512, concurrency: 1 },
      synthesize: { offline: true, buildNetwork: 'none' },
      validate: { harness: { rounds: 3, cpus: 'none' } },
    }),
  );
  const config = loadConfig({ configPath, flags: {}, env: {} }).config;
  db = openStore(dbPath);
  const ctx = createContext({ config, credentials: readCredentials({}), db, log, metrics, services: { docker } });
  const result = await runPipeline(ctx, {
    window: monthWindow('2025-04'),
    repos: [REPO],
    prs: [101],
    source: { kind: 'git', path: sample.path },
  });
  const emit = result.reports.find((r) => r.stage === 'emit');
  if (emit?.done !== 1) {
    // the whole log for whoever reads the failure, and its gist in the error (the line a CI log's tail keeps)
    console.log(lines.join(''));
    const undone = db
      .prepare<[], { stage: string; key: string; status: string; reason: string | null; detail: string | null; last_error: string | null }>(
        "SELECT stage, key, status, reason, detail, last_error FROM stage_items WHERE status <> 'done'",
      )
      .all()
      .map((r) => `${r.stage} ${r.key} ${r.status} ${r.reason ?? ''}: ${(r.last_error ?? r.detail ?? '').slice(0, 300)}`);
    db.close();
    throw new Error(`the pipeline emitted no task for #101; items not done: ${undone.join(' | ') || 'none'}`);
  }
  db.close();

  const folder = join(out, '2025-04', ID);
  const meta = JSON.parse(readFileSync(join(folder, 'metadata.json'), 'utf8')) as { base_commit: string };
  const expert = readFileSync(join(folder, 'expert.patch'), 'utf8');
  patches['expert'] = expert;
  patches['empty'] = '';
  patches['breaks-test'] = patchOf(meta.base_commit, (c) =>
    c.replace('    if n < 2:\n        return n\n', '    if n < 2:\n        return n * 2\n'),
  );
  patches['changes-value'] = patchOf(meta.base_commit, (c) =>
    c.replace('    for i in range(1, n + 1):\n        total += i * i\n', '    for i in range(1, n + 2):\n        total += i * i\n'),
  );
  patches['does-not-apply'] = expert.replace(/return fib\(n - 1\) \+ fib\(n - 2\)/, 'return fib(n - 1) * fib(n - 2)');
  const globals = { config: configPath, json: true };
  // the expert's patch as an agent's, from the task folder
  writeFileSync(join(dir, 'expert-as-agent.patch'), expert);
  single = await runScore({ task: folder, patch: join(dir, 'expert-as-agent.patch'), model: 'expert-copy' }, globals, docker);
  const predictions = Object.entries(patches).map(([model, patch]) => ({
    instance_id: ID,
    model_name_or_path: model === 'expert' ? 'expert-copy' : model,
    model_patch: patch,
  }));
  writeFileSync(join(dir, 'preds.json'), JSON.stringify(predictions));
  first = await runScore({ predictions: join(dir, 'preds.json') }, globals, docker);
  for (const r of first.rows)
    console.log(
      `${r.model_name_or_path} ${r.status} ${r.failure} agent ${r.agent_speedup} expert ${r.expert_speedup} adv ${r.advantage} norm ${r.normalized_advantage} measured ${r.measured}`,
    );
}, 2_400_000);

afterAll(async () => {
  await docker.removeLabelled(label);
  rmSync(dir, { recursive: true, force: true });
}, 300_000);

describe('perfmine score on the sample task #101 (real Docker engine, perfmine harness)', () => {
  it("the expert's own patch scored as an agent: both far faster on time_fib, advantage near 0", () => {
    const r = single.rows[0]!;
    expect(r).toMatchObject({ instance_id: ID, model_name_or_path: 'expert-copy', status: 'scored', failure: null, measured: true });
    const fib = r.workloads.find((w) => w.name === 'bench_core.time_fib')!;
    expect(fib.agent_speedup!).toBeGreaterThan(50);
    expect(fib.expert_speedup!).toBeGreaterThan(50);
    expect(fib.agent_verdict).toBe('improved');
    expect(r.workloads).toHaveLength(6);
    expect(storedSide('expert-copy')).toMatchObject({ rules: 3, pairs: 20, protocol: expect.objectContaining({ rounds: 20 }) });
    // the verifier's reward: the expert's patch against itself measured beside it
    expect(Math.abs(r.reward! - 1)).toBeLessThan(0.1);
    expect(r.hacks).toEqual([]);
    // two measurements of the same patch: the geometric means agree within the machine's noise (wide margin)
    expect(Math.abs(r.agent_speedup! / r.expert_speedup! - 1)).toBeLessThan(0.3);
    expect(Math.abs(r.advantage!)).toBeLessThan(0.3 * r.expert_speedup!);
  });

  it('an empty patch: speedup 1, a negative advantage', () => {
    const r = byModel(first, 'empty');
    expect(r).toMatchObject({ status: 'failed', failure: 'empty-patch', agent_speedup: 1 });
    expect(r.expert_speedup!).toBeGreaterThan(1.5);
    expect(r.advantage!).toBeLessThan(0);
  });

  it('a patch that breaks a test is failed with the test named', () => {
    const r = byModel(first, 'breaks-test');
    expect(r.status).toBe('failed');
    expect(r.failure).toBe('tests-regressed');
    expect(r.regressed_tests).toEqual([expect.stringContaining('test_fib')]);
    expect(r.advantage!).toBeLessThan(0);
    expect(r.reward).toBe(-1);
    // the tests run before the measurement when scoring: a patch they fail is never measured
    expect(storedSide('breaks-test')).toMatchObject({ pairs: 0, protocol: null, workloads: [] });
  });

  it("a patch that changes a benchmark's return value is failed as snapshot-mismatch", () => {
    const r = byModel(first, 'changes-value');
    expect(r).toMatchObject({ status: 'failed', failure: 'snapshot-mismatch' });
    expect(r.snapshot_mismatches).toContain('bench_core.time_sum_of_squares');
    expect(storedSide('changes-value')).toMatchObject({ pairs: 0, protocol: null, workloads: [] });
  });

  it('a patch that does not apply is patch-does-not-apply', () => {
    expect(byModel(first, 'does-not-apply')).toMatchObject({ status: 'failed', failure: 'patch-does-not-apply' });
  });

  it('the predictions file gives the same result for the expert copy, reused from the store; the aggregate has one line per model', () => {
    const r = byModel(first, 'expert-copy');
    expect(r).toMatchObject({ status: 'scored', measured: false, advantage: single.rows[0]!.advantage });
    expect(first.models.map((m) => [m.model, m.tasks, m.passed])).toEqual([
      ['breaks-test', 1, 0],
      ['changes-value', 1, 0],
      ['does-not-apply', 1, 0],
      ['empty', 1, 0],
      ['expert-copy', 1, 1],
    ]);
    const jsonl = readFileSync(first.results, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { model_name_or_path: string; failure: string | null });
    expect(jsonl.map((x) => [x.model_name_or_path, x.failure])).toEqual(first.rows.map((x) => [x.model_name_or_path, x.failure]));
    expect(readFileSync(first.results.replace(/\.jsonl$/, '.summary.txt'), 'utf8')).toContain('advantage');
  });

  it('scoring again measures nothing and gives the same rows', async () => {
    const db2 = openStore(dbPath, { readonly: true });
    const before = new ScoreStore(db2).count();
    db2.close();
    const builds = metrics.get('docker.builds');
    const again = await runScore({ predictions: join(dir, 'preds.json') }, { config: configPath, json: true }, docker);
    expect(again.rows.every((r) => !r.measured)).toBe(true);
    expect(metrics.get('docker.builds')).toBe(builds);
    expect(again.rows.map((r) => [r.model_name_or_path, r.failure, r.advantage])).toEqual(
      first.rows.map((r) => [r.model_name_or_path, r.failure, r.advantage]),
    );
    // the task folder's entry point: instruction.md beside it, score.sh runs `perfmine score` on the folder
    const folder = join(out, '2025-04', ID);
    expect(readFileSync(join(folder, 'instruction.md'), 'utf8')).toContain(readFileSync(join(folder, 'problem_statement.md'), 'utf8'));
    const viaScript = execFileSync(
      'bash',
      [join(folder, 'score.sh'), join(dir, 'expert-as-agent.patch'), 'expert-copy', '--config', configPath, '--json'],
      {
        encoding: 'utf8',
        env: cleanEnv({ PERFMINE: BIN }),
      },
    );
    const parsed = JSON.parse(viaScript) as {
      rows: { model_name_or_path: string; status: string; measured: boolean; advantage: number }[];
    };
    expect(parsed.rows).toEqual([
      expect.objectContaining({
        model_name_or_path: 'expert-copy',
        status: 'scored',
        measured: false,
        advantage: single.rows[0]!.advantage,
      }),
    ]);
    const db3 = openStore(dbPath, { readonly: true });
    expect(new ScoreStore(db3).count()).toBe(before);
    db3.close();
  });
});
