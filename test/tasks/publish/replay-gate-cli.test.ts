import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplayStore } from '../../../cache/replays.js';
import { openStore } from '../../../cache/store.js';
import { writeFolderReplay } from '../../../pipeline/concepts/replay-files.js';
import type { ReplayRecord } from '../../../pipeline/concepts/records/replay-record.js';
import { runStage } from '../../../pipeline/runner.js';
import { createEmitStage } from '../../../stages/emit/index.js';
import { createValidateStage } from '../../../stages/validate/index.js';
import { readTaskFolder } from '../../../tasks/replay/task-folder.js';
import { runCli } from '../../helpers/cli.js';
import { monthScope, testConfig, testContext } from '../../helpers/context.js';
import { storeCandidate } from '../../validate/stage/candidate.js';
import { FakeRunner } from '../../validate/stage/fake-runner.js';
import { fakeSealedSources } from '../../emit/fake-sealed-sources.js';
import { replayRecord } from '../../emit/replay-records.js';

/**
 * The replay gate through the real CLI (validate with the container seam, then emit; replay
 * records made by the test, as `perfmine replay` writes them): `publish` includes only the tasks
 * whose folder has a replicating replay, lists the others with the reason (text, JSON, the card),
 * and carries each published task's replays; `tasks` and `report` show each task's replays, their
 * machines and the replicated workloads; replays in a task folder and in the store add up.
 */
const scratch = mkdtempSync(join(tmpdir(), 'perfmine-replay-gate-'));
const dbPath = join(scratch, 'perfmine.db');
const out = join(scratch, 'out');
const dataset = join(scratch, 'dataset');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const FAST = {
  expert: { names: new Set(['benchmarks.TextSuite.time_divide_unicode_heavy', 'benchmarks.PrettySuite.time_pretty']), factor: 0.5 },
};
const folder = (n: number) => join(out, '2025-04', `acme__fastlib-${n}`);
let replicating: ReplayRecord;
let against: ReplayRecord;

interface PublishJson {
  months: { month: string; tasks: number }[];
  leftOut: { instanceId: string; month: string; reason: string; detail: string }[];
}

beforeAll(async () => {
  const db = openStore(dbPath);
  storeCandidate(db, { number: 101 });
  storeCandidate(db, { number: 102, baseSha: 'd'.repeat(40), mergedAt: '2025-04-20T08:00:00Z', title: 'PERF: faster join' });
  storeCandidate(db, { number: 103, baseSha: 'e'.repeat(40), mergedAt: '2025-04-21T08:00:00Z', title: 'PERF: faster split' });
  const ctx = testContext(db, { config: testConfig({ out }) });
  const fake = new FakeRunner(FAST, {});
  await runStage(
    ctx,
    createValidateStage(() => fake),
    monthScope('2025-04'),
  );
  await runStage(ctx, createEmitStage(fakeSealedSources), monthScope('2025-04'));
  const task = (n: number) => ({
    instanceId: `acme__fastlib-${n}`,
    repo: 'acme/fastlib',
    pullNumber: n,
    digest: readTaskFolder(folder(n)).digest,
  });
  // #101: replayed elsewhere, the record copied back into its folder only
  replicating = replayRecord({ ...task(101), outcomes: { 'benchmarks.PrettySuite.time_pretty': 'replicates' }, machineMs: 90_000 });
  writeFolderReplay(folder(101), replicating);
  // #102: replayed here (the store), and it does not replicate
  against = replayRecord({ ...task(102), outcomes: { 'benchmarks.PrettySuite.time_pretty': 'does-not-replicate' }, machineMs: 30_000 });
  new ReplayStore(db).save(against, 'replayed');
  // #103: not replayed
  db.close();
}, 120_000);

describe('the replay gate through the CLI', () => {
  it('publish includes only the replicating task, lists the others with their reason, and carries its replays', async () => {
    const r = await runCli(['publish', '--db', dbPath, '--out', out, '--to', dataset, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout) as PublishJson;
    expect(run.months).toEqual([{ month: '2025-04', tasks: 1 }]);
    expect(run.leftOut.map((d) => [d.instanceId, d.reason])).toEqual([
      ['acme__fastlib-102', 'replays-do-not-replicate'],
      ['acme__fastlib-103', 'not-replayed'],
    ]);
    expect(run.leftOut[0]!.detail).toContain(`replay ${against.id.slice(0, 8)}`);
    expect(run.leftOut[0]!.detail).toContain('benchmarks.PrettySuite.time_pretty: the replay calls it unchanged');
    expect(existsSync(join(dataset, 'tasks/2025-04/acme__fastlib-101/Dockerfile'))).toBe(true);
    expect(JSON.parse(readFileSync(join(dataset, `tasks/2025-04/acme__fastlib-101/replays/${replicating.id}.json`), 'utf8'))).toEqual(
      replicating,
    );
    expect(existsSync(join(dataset, 'tasks/2025-04/acme__fastlib-102'))).toBe(false);
    const card = readFileSync(join(dataset, 'README.md'), 'utf8');
    expect(card).toContain('1 tasks from 1 repository');
    expect(card).toContain(
      '| acme__fastlib-101 | 1 replay (1 replicate) on 1 machine | AMD EPYC, 2 CPUs, kernel 6.1.0 | benchmarks.PrettySuite.time_pretty (1/1) |',
    );
    expect(card).toMatch(/\| acme__fastlib-102 \| 2025-04 \| replays-do-not-replicate \| 1 of 1 conclusive replays do not replicate/);
    expect(card).toContain('| acme__fastlib-103 | 2025-04 | not-replayed | no replay of its folder: run perfmine replay on it |');

    const text = await runCli(['publish', '--db', dbPath, '--out', out, '--to', dataset]);
    expect(text.stdout).toContain('acme__fastlib-103 (2025-04) left out: not-replayed: no replay of its folder');
    // --min-replays 0: no gate
    const all = JSON.parse(
      (await runCli(['publish', '--db', dbPath, '--out', out, '--to', join(scratch, 'all'), '--min-replays', '0', '--json'])).stdout,
    ) as PublishJson;
    expect(all.months).toEqual([{ month: '2025-04', tasks: 3 }]);
    expect(all.leftOut).toEqual([]);
  });

  it('tasks lists each task with its replays, machines, replicated workloads and whether it is published', async () => {
    const r = await runCli(['tasks', '--db', dbPath, '--out', out, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const tasks = (JSON.parse(r.stdout) as { tasks: { instance_id: string; replays: Record<string, unknown> }[] }).tasks;
    expect(tasks.map((t) => [t.instance_id, t.replays['count'], t.replays['published'], t.replays['gate_reason']])).toEqual([
      ['acme__fastlib-101', 1, true, null],
      ['acme__fastlib-102', 1, false, 'replays-do-not-replicate'],
      ['acme__fastlib-103', 0, false, 'not-replayed'],
    ]);
    expect(tasks[0]!.replays).toMatchObject({
      by_verdict: { replicates: 1, 'does-not-replicate': 0, inconclusive: 0, failed: 0 },
      machines: ['AMD EPYC, 2 CPUs, kernel 6.1.0'],
      replicated_workloads: ['benchmarks.PrettySuite.time_pretty'],
      workloads: [{ name: 'benchmarks.PrettySuite.time_pretty', judged: 1, replicated: 1 }],
    });
    const text = (await runCli(['tasks', '--db', dbPath, '--out', out])).stdout;
    expect(text).toMatch(/acme__fastlib-101 .* 1\/1 replicate, 1 machine; published/);
    expect(text).toMatch(/acme__fastlib-102 .* 0\/1 replicate \(1 do not\), 1 machine; left out \(replays-do-not-replicate\)/);
    expect(text).toMatch(/acme__fastlib-103 .* none; left out \(not-replayed\)/);
    expect(text).toContain(
      'acme__fastlib-101: replayed on AMD EPYC, 2 CPUs, kernel 6.1.0; replicated: benchmarks.PrettySuite.time_pretty 1/1',
    );
  });

  it('the report shows each task’s replays and the gate; the store’s replays count in the task’s cost', async () => {
    const page = join(scratch, 'report.html');
    const r = await runCli(['report', '--db', dbPath, '--month', '2025-04', '--out', page], { env: { PERFMINE_OUT: out } });
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(page, 'utf8');
    expect(html).toMatch(
      /<tr data-task="acme__fastlib-101">.*<td data-col="replays" data-count="1" data-replicates="1">1: 1 replicate<\/td><td data-col="machines">AMD EPYC, 2 CPUs, kernel 6\.1\.0<\/td><td data-col="replicated">benchmarks\.PrettySuite\.time_pretty \(1\/1\)<\/td><td data-col="publish" data-published="true"/,
    );
    expect(html).toMatch(
      /<tr data-task="acme__fastlib-103">.*<td data-col="publish" data-published="false" title="no replay of its folder: run perfmine replay on it">left out: not-replayed<\/td>/,
    );
    const status = JSON.parse((await runCli(['status', '--db', dbPath, '--month', '2025-04', '--json'])).stdout) as {
      costs: { tasks: { instanceId: string; replayMinutes: number }[] };
    };
    expect(status.costs.tasks.find((t) => t.instanceId === 'acme__fastlib-102')!.replayMinutes).toBeCloseTo(0.5, 6);
  });

  it('perfmine --help lists replay, and replay --help states the rule, the record and the exit codes', async () => {
    const help = await runCli(['--help']);
    expect(help.stdout).toMatch(/^ {2}replay \[options\] <dir> +rebuild emitted tasks/m);
    const own = await runCli(['replay', '--help']);
    for (const text of [
      '--times <N>',
      '--index <URL|dir:PATH>',
      '--no-cache',
      '--note <TEXT>',
      'The replication rule',
      '<task folder>/replays/<id>.json',
      'Exit codes: 0',
    ])
      expect(own.stdout).toContain(text);
    const publish = await runCli(['publish', '--help']);
    expect(publish.stdout).toContain('--min-replays <N>');
    // a path that names no task folder is a usage error
    const none = await runCli(['replay', '--db', dbPath, scratch]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('is neither a task folder');
  });
});
