import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../../cache/store.js';
import { runStage } from '../../../pipeline/runner.js';
import { createEmitStage } from '../../../stages/emit/index.js';
import { createValidateStage } from '../../../stages/validate/index.js';
import { runCli } from '../../helpers/cli.js';
import { monthScope, testConfig, testContext } from '../../helpers/context.js';
import { storeCandidate } from '../../validate/stage/candidate.js';
import { FakeRunner } from '../../validate/stage/fake-runner.js';
import { fakeSealedSources } from '../../emit/fake-sealed-sources.js';

const emitStage = createEmitStage(fakeSealedSources);

/**
 * perfmine publish on two emitted months (validate with the container seam serving real asv runs
 * with planted speedups, then emit): the Hugging Face folder loads with DuckDB per configuration,
 * the row counts match `perfmine tasks`, the README's YAML header parses (PyYAML), and publishing
 * again changes no byte.
 */
const scratch = mkdtempSync(join(tmpdir(), 'perfmine-publish-'));
const dbPath = join(scratch, 'perfmine.db');
const out = join(scratch, 'out');
const dataset = join(scratch, 'dataset');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const FAST = {
  expert: { names: new Set(['benchmarks.TextSuite.time_divide_unicode_heavy', 'benchmarks.PrettySuite.time_pretty']), factor: 0.5 },
};
let db: Db;

function filesOf(dir: string): Map<string, { bytes: Buffer; mtimeMs: number }> {
  const files = new Map<string, { bytes: Buffer; mtimeMs: number }>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else files.set(relative(dir, p), { bytes: readFileSync(p), mtimeMs: st.mtimeMs });
    }
  };
  walk(dir);
  return files;
}

/** The README's YAML header, parsed by an independent reader. */
function yamlHeaderOf(readme: string): {
  configs: { config_name: string; data_files: { split: string; path: string }[] }[];
  license: string;
} {
  const header = /^---\n([\s\S]*?)\n---\n/.exec(readme)![1]!;
  writeFileSync(join(scratch, 'header.yaml'), header);
  const json = execFileSync(
    'python3',
    ['-c', 'import sys, json, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))', join(scratch, 'header.yaml')],
    { encoding: 'utf8' },
  );
  return JSON.parse(json) as ReturnType<typeof yamlHeaderOf>;
}

beforeAll(async () => {
  db = openStore(dbPath);
  storeCandidate(db, { number: 101 });
  storeCandidate(db, { number: 102, baseSha: 'd'.repeat(40), mergedAt: '2025-04-20T08:00:00Z', title: 'PERF: faster join' });
  storeCandidate(db, { repo: 'zeta/lib', number: 5, baseSha: '9'.repeat(40), url: null, mergedAt: '2025-05-03T00:00:00Z' });
  const ctx = testContext(db, { config: testConfig({ out }) });
  const fake = new FakeRunner(FAST, {});
  for (const month of ['2025-04', '2025-05']) {
    await runStage(
      ctx,
      createValidateStage(() => fake),
      monthScope(month),
    );
    await runStage(ctx, emitStage, monthScope(month));
  }
  db.close();
});

describe('perfmine publish', () => {
  it('writes one Parquet per month, the task folders, and a README whose YAML header has a default and a per-month config', async () => {
    const r = await runCli(['publish', '--db', dbPath, '--to', dataset, '--min-replays', '0', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const files = [...filesOf(dataset).keys()];
    expect(files.filter((f) => f.startsWith('data/'))).toEqual(['data/2025-04.parquet', 'data/2025-05.parquet']);
    expect(files).toContain('tasks/2025-04/acme__fastlib-101/expert.patch');
    expect(files).toContain('tasks/2025-05/zeta__lib-5/Dockerfile');
    const readme = readFileSync(join(dataset, 'README.md'), 'utf8');
    const header = yamlHeaderOf(readme);
    expect(header.configs.map((c) => [c.config_name, c.data_files[0]!.path])).toEqual([
      ['default', 'data/*.parquet'],
      ['2025-04', 'data/2025-04.parquet'],
      ['2025-05', 'data/2025-05.parquet'],
    ]);
    // the card: what a task is, the fields with types, the funnel per month, the false-positive rate, licences
    for (const heading of [
      '## What a task is',
      '## Fields',
      '## How tasks were selected and measured',
      '## Funnel and counts per month',
      '## Measurement protocol and its false-positive rate',
      '## Licences',
    ]) {
      expect(readme).toContain(heading);
    }
    expect(readme).toContain('| `pull_number` | int32 |');
    // the ledger's funnel (this fixture records collect, classify, validate and emit; no filter or synthesize rows in the window)
    expect(readme).toContain('| 2025-04 | 2 | 0 | 2 | 0 | 2 | 2 |');
    expect(readme).toContain('| 2025-05 | 1 | 0 | 1 | 0 | 1 | 1 |');
    expect(readme).toContain('| all | 0.00% (0 of 96 base/base workload comparisons flagged) |');
    expect(readme).toContain('| zeta/lib | 1 | see https://github.com/zeta/lib |');
  });

  it('every configuration loads with DuckDB and has the row count `perfmine tasks` lists', async () => {
    const listed = JSON.parse((await runCli(['tasks', '--db', dbPath, '--out', out, '--json'])).stdout) as {
      tasks: { instance_id: string; month: string }[];
    };
    const header = yamlHeaderOf(readFileSync(join(dataset, 'README.md'), 'utf8'));
    const duck = await DuckDBInstance.create(':memory:');
    const conn = await duck.connect();
    for (const c of header.configs) {
      const result = await conn.runAndReadAll(
        `SELECT instance_id, month FROM read_parquet('${join(dataset, c.data_files[0]!.path)}') ORDER BY instance_id`,
      );
      const rows = result.getRowObjectsJson() as { instance_id: string; month: string }[];
      const expected = listed.tasks.filter((t) => c.config_name === 'default' || t.month === c.config_name);
      expect(
        rows.map((x) => x.instance_id),
        c.config_name,
      ).toEqual(expected.map((t) => t.instance_id).sort());
    }
    conn.closeSync();
  });

  it('publishing again changes no byte and writes nothing; --months narrows the folder to those months', async () => {
    const before = filesOf(dataset);
    const again = await runCli(['publish', '--db', dbPath, '--to', dataset, '--min-replays', '0', '--json']);
    const report = JSON.parse(again.stdout) as { written: string[]; unchanged: number; removed: string[] };
    expect(report.written).toEqual([]);
    expect(report.removed).toEqual([]);
    expect(filesOf(dataset)).toEqual(before);
    const one = await runCli(['publish', '--db', dbPath, '--to', dataset, '--months', '2025-04', '--min-replays', '0', '--json']);
    const narrowed = JSON.parse(one.stdout) as { written: string[]; removed: string[] };
    expect(narrowed.written).toEqual(['README.md']);
    expect(narrowed.removed).toEqual(expect.arrayContaining(['data/2025-05.parquet']));
    expect(readFileSync(join(dataset, 'data/2025-04.parquet'))).toEqual(before.get('data/2025-04.parquet')!.bytes);
  });
});

describe('perfmine score on bad predictions (the same store; nothing to measure)', () => {
  it('names each bad row, writes the results, and exits 1', async () => {
    const file = join(scratch, 'bad.jsonl');
    writeFileSync(
      file,
      [
        JSON.stringify({ instance_id: 'acme__fastlib-101', model_name_or_path: 'm', patch: 'x' }),
        JSON.stringify({ instance_id: 'nobody__nothing-1', model_name_or_path: 'm', model_patch: 'x' }),
        JSON.stringify({ instance_id: 'acme__fastlib-102', model_name_or_path: 'm', model_patch: 'y'.repeat(50 * 1024 * 1024) }),
        '{"instance_id": ',
      ].join('\n'),
    );
    const r = await runCli(['score', '--db', dbPath, '--out', out, '--predictions', file, '--json']);
    expect(r.code, r.stderr).toBe(1);
    const run = JSON.parse(r.stdout) as { results: string; rows: { row: number; status: string; failure: string }[] };
    expect(run.rows.map((x) => [x.row, x.status, x.failure])).toEqual([
      [1, 'rejected', 'invalid-prediction'],
      [2, 'rejected', 'unknown-instance'],
      [3, 'rejected', 'patch-too-large'],
      [4, 'rejected', 'invalid-json'],
    ]);
    expect(run.results).toBe(join(out, 'scores', 'bad.jsonl'));
    expect(readFileSync(run.results, 'utf8').trim().split('\n')).toHaveLength(4);
  });
});
