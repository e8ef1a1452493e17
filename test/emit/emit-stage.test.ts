import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../cache/store.js';
import { runStage } from '../../pipeline/runner.js';
import type { PipelineContext } from '../../pipeline/stage.js';
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
 * emit after validate, on a file database: validate runs with the container seam serving the real
 * rich #3399 runs (planted 2x speedups for the candidates meant to be kept), then emit writes the
 * month. Three candidates are kept (two repositories), one is a placebo (dropped).
 */
const scratch = mkdtempSync(join(tmpdir(), 'perfmine-emit-'));
const dbPath = join(scratch, 'perfmine.db');
const out = join(scratch, 'out');
const month = join(out, '2025-04');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const FAST = {
  expert: { names: new Set(['benchmarks.TextSuite.time_divide_unicode_heavy', 'benchmarks.PrettySuite.time_pretty']), factor: 0.5 },
};

let db: Db;
let ctx: PipelineContext;

/** Every file under the month's folder with its bytes. */
function snapshotFiles(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else files.set(relative(dir, p), readFileSync(p));
    }
  };
  walk(dir);
  return files;
}

beforeAll(async () => {
  db = openStore(dbPath);
  storeCandidate(db, { number: 101 });
  storeCandidate(db, { number: 102, baseSha: 'd'.repeat(40), mergedAt: '2025-04-20T08:00:00Z', title: 'PERF: faster join' });
  storeCandidate(db, { number: 103, baseSha: 'e'.repeat(40) }); // the placebo
  storeCandidate(db, { repo: 'zeta/lib', number: 5, baseSha: '9'.repeat(40), url: null, mergedAt: '2025-04-03T00:00:00Z' });
  ctx = testContext(db, { config: testConfig({ out }) });
  const fake = new FakeRunner(FAST, { 'acme/fastlib#103': {} });
  const validated = await runStage(
    ctx,
    createValidateStage(() => fake),
    monthScope('2025-04'),
  );
  expect(validated).toMatchObject({ done: 3, dropped: { 'no-improvement': 1 } });
  const emitted = await runStage(ctx, emitStage, monthScope('2025-04'));
  expect(emitted).toMatchObject({ planned: 3, done: 3 });
  // the run summary's "tasks emitted" line
  expect(ctx.metrics.get('emit.tasks')).toBe(3);
});
afterAll(() => db.close());

describe('emit: the month on disk', () => {
  it('writes tasks.jsonl sorted by instance id, and a folder of six files per task', () => {
    const rows = readFileSync(join(month, 'tasks.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => taskRowSchema.parse(JSON.parse(l)));
    expect(rows.map((r) => r.instance_id)).toEqual(['acme__fastlib-101', 'acme__fastlib-102', 'zeta__lib-5']);
    for (const r of rows) {
      expect(r.month).toBe('2025-04');
      expect(r.workloads.count).toBe(32);
      expect(r.expert_speedup.improved!).toBeGreaterThan(1.5);
      expect(readdirSync(join(month, r.instance_id)).sort()).toEqual([
        'Dockerfile',
        'docker_build.sh',
        'expert.patch',
        'instruction.md',
        'metadata.json',
        'perfmine',
        'problem_statement.md',
        'score.sh',
        'source',
        'usr',
        'workloads.json',
      ]);
      expect(readFileSync(join(month, r.instance_id, 'expert.patch'), 'utf8')).toBe(r.patch);
      // the sealed history (a blob of the store), and perfmine's files the Dockerfile copies
      expect(readFileSync(join(month, r.instance_id, 'source', 'repo.bundle'), 'utf8')).toBe(
        `sealed history of ${r.repo}@${r.base_commit}\n`,
      );
      expect(readdirSync(join(month, r.instance_id, 'perfmine')).sort()).toEqual(['bench', 'perfmine_lock.py', 'seal.sh']);
      expect(readdirSync(join(month, r.instance_id, 'perfmine', 'bench'))).toContain('task.json');
      expect(readdirSync(join(month, r.instance_id, 'usr', 'local', 'bin'))).toEqual(['perfmine-bench']);
    }
    const meta = JSON.parse(readFileSync(join(month, 'acme__fastlib-101', 'metadata.json'), 'utf8')) as {
      measurement: { false_positive_rate: number; pairs: number; minimum_detectable_speedup: { median: number } };
      workloads: { improved: string[] };
    };
    expect(meta.measurement).toMatchObject({
      engine: 'perfmine',
      pairs: 20,
      false_positive_rate: 0,
      protocol: { engine: 'perfmine', rounds: 20 },
    });
    expect(meta.measurement.minimum_detectable_speedup.median).toBeGreaterThanOrEqual(1.05);
    expect(meta.workloads.improved).toEqual(['benchmarks.PrettySuite.time_pretty', 'benchmarks.TextSuite.time_divide_unicode_heavy']);
    expect(readdirSync(month).sort()).toEqual([
      'acme__fastlib-101',
      'acme__fastlib-102',
      'manifest.json',
      'tasks.jsonl',
      'tasks.parquet',
      'zeta__lib-5',
    ]);
  });

  it('writes a Parquet file that an independent reader (DuckDB) reads back equal to the JSONL', async () => {
    const jsonl = readFileSync(join(month, 'tasks.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    const duck = await DuckDBInstance.create(':memory:');
    const conn = await duck.connect();
    const result = await conn.runAndReadAll(`SELECT * FROM read_parquet('${join(month, 'tasks.parquet')}')`);
    expect(result.getRowObjectsJson()).toEqual(jsonl);
    expect(result.columnTypes().map(String)).toContain('STRUCT("count" INTEGER, "names" VARCHAR[])');
    conn.closeSync();
  });

  it('gives byte-identical files, the manifest included, when the month is emitted again with the same content', async () => {
    const before = snapshotFiles(month);
    const again = await runStage(ctx, emitStage, monthScope('2025-04'), { force: true });
    expect(again.ran).toBe(3);
    const after = snapshotFiles(month);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [path, bytes] of before) expect(after.get(path)!.equals(bytes), path).toBe(true);
    const manifest = JSON.parse(after.get('manifest.json')!.toString('utf8')) as {
      producedAt: string;
      tasks: number;
      sha256: Record<string, string>;
    };
    expect(manifest.tasks).toBe(3);
    expect(Object.keys(manifest.sha256)).toContain('tasks.parquet');
    expect(Date.parse(manifest.producedAt)).not.toBeNaN();
  });

  it('writes the whole month on a partial rerun (one repository), and drops a task validate no longer keeps', async () => {
    const partial = await runStage(ctx, emitStage, monthScope('2025-04', { repos: ['zeta/lib'] }), { force: true });
    expect(partial.planned).toBe(1);
    expect(readdirSync(month).filter((n) => n.includes('__'))).toEqual(['acme__fastlib-101', 'acme__fastlib-102', 'zeta__lib-5']);

    // 102 is validated again and dropped: the next emit leaves it out of the month
    const row = ctx.ledger.get('validate', 'acme/fastlib#102')!;
    ctx.ledger.complete(
      'validate',
      1,
      { key: row.key, repo: row.repo, at: row.at, inputHash: row.inputHash },
      { status: 'dropped', reason: 'tests-regressed', detail: 'x', output: row.output },
      null,
    );
    const manifestOf = () => JSON.parse(readFileSync(join(month, 'manifest.json'), 'utf8')) as { producedAt: string; tasks: number };
    const produced = manifestOf().producedAt;
    await runStage(ctx, emitStage, monthScope('2025-04', { repos: ['zeta/lib'] }));
    expect(readdirSync(month).filter((n) => n.includes('__'))).toEqual(['acme__fastlib-101', 'zeta__lib-5']);
    expect(readFileSync(join(month, 'tasks.jsonl'), 'utf8').trimEnd().split('\n')).toHaveLength(2);
    // other content: the production time is this emit's (test/emit/month-files.test.ts checks it with fixed clocks)
    expect(manifestOf().tasks).toBe(2);
    expect(manifestOf().producedAt >= produced).toBe(true);
  });

  it('lists the emitted tasks with `perfmine tasks`', async () => {
    const text = await runCli(['tasks', '--db', dbPath, '--out', out, '--month', '2025-04']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^instance_id +month +workloads +speedup \(all \/ improved\) +category +replays +folder/);
    expect(text.stdout).toContain('acme__fastlib-101  2025-04  2/32 improved');
    const json = await runCli(['tasks', '--db', dbPath, '--out', out, '--json']);
    const listed = JSON.parse(json.stdout) as { tasks: { instance_id: string; improved: number; written: boolean; folder: string }[] };
    expect(listed.tasks.map((t) => [t.instance_id, t.improved, t.written])).toEqual([
      ['acme__fastlib-101', 2, true],
      ['zeta__lib-5', 2, true],
    ]);
    const none = await runCli(['tasks', '--db', dbPath, '--out', out, '--month', '2025-05']);
    expect(none.stdout.trim()).toBe('no tasks emitted');
  });
});
