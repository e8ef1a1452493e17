import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReplayStore } from '../../../cache/replays.js';
import { openStore } from '../../../cache/store.js';
import { mergeReplays, readFolderReplays, REPLAYS_DIR, writeFolderReplay } from '../../../pipeline/concepts/replay-files.js';
import { replaySummaryLine, summarizeReplays } from '../../../pipeline/concepts/replay-summary.js';
import { writeMonth, type MonthTask } from '../../../stages/emit/month-files.js';
import { datasetCard, datasetFiles, type PublishedMonth } from '../../../tasks/publish/dataset-files.js';
import { gateTask, monthTaskDigest, type GateOptions } from '../../../tasks/publish/replay-gate.js';
import type { TaskRow } from '../../../stages/emit/row.js';
import { tempDir } from '../../helpers/harness.js';
import { MONTH_TASKS } from '../../helpers/written-task.js';
import { replayRecord } from '../../emit/replay-records.js';

const row = (n: number): TaskRow => ({
  instance_id: `a__b-${n}`,
  repo: 'a/b',
  pull_number: n,
  base_commit: 'b'.repeat(40),
  merge_commit: 'm'.repeat(40),
  created_at: '2025-04-01T00:00:00.000Z',
  merged_at: '2025-04-02T00:00:00.000Z',
  problem_statement: 'make it faster',
  patch: 'diff --git a/x.py b/x.py\n',
  image_name: `perfmine/a-b:${n}`,
  build_script: '#!/bin/bash\n',
  workloads: { count: 1, names: ['bench.time_x'] },
  expert_speedup: { all: 2, improved: 2 },
  category: null,
  difficulty: null,
  classifier: 'rules',
  month: '2025-04',
});
const task = (n: number, patch = 'diff --git a/x.py b/x.py\n'): MonthTask => ({
  row: row(n),
  files: { Dockerfile: 'FROM x\n', 'expert.patch': patch, 'instruction.md': `# ${n}\n`, 'workloads.json': '[]\n' },
  blobs: {},
});
const GATE: GateOptions = { minReplays: 1, minReplicatedShare: 1 };
const of = (t: MonthTask, rest: Partial<Parameters<typeof replayRecord>[0]> = {}) =>
  replayRecord({ instanceId: t.row.instance_id, repo: 'a/b', pullNumber: t.row.pull_number, digest: monthTaskDigest(t), ...rest });

describe('the publish gate', () => {
  const t = task(1);

  it('leaves out a task without a replay of its folder, and one whose replays are of another version of it (not counted)', () => {
    expect(gateTask(t, [], GATE)).toMatchObject({
      published: false,
      reason: 'not-replayed',
      detail: 'no replay of its folder: run perfmine replay on it',
    });
    const placeboFolder = task(1, 'diff --git a/placebo.py b/placebo.py\n');
    expect(monthTaskDigest(placeboFolder)).not.toBe(monthTaskDigest(t));
    // the agent's texts do not enter the digest
    expect(monthTaskDigest({ ...t, files: { ...t.files, 'instruction.md': '# other\n' } })).toBe(monthTaskDigest(t));
    const stale = of(placeboFolder, { outcomes: { 'bench.time_x': 'does-not-replicate' } });
    const d = gateTask(t, [stale], GATE);
    expect(d).toMatchObject({ published: false, reason: 'not-replayed' });
    expect(d.detail).toContain('1 replay of another version of its folder not counted');
    expect(d.summary).toMatchObject({ count: 0, stale: 1 });
    // with a replay of its own folder too: published, the other one named and not counted
    expect(gateTask(t, [of(t), stale], GATE)).toMatchObject({
      published: true,
      detail: '1 replay (1 replicate) on 1 machine; 1 of another version of the folder not counted',
    });
  });

  it('publishes a task with a replicating replay of its folder', () => {
    const d = gateTask(t, [of(t)], GATE);
    expect(d).toMatchObject({ published: true, reason: null });
    expect(d.detail).toBe('1 replay (1 replicate) on 1 machine');
  });

  it('leaves out a task with a replay that does not replicate, naming the replay, its machine and the workload', () => {
    const against = of(t, { outcomes: { 'bench.time_x': 'does-not-replicate' }, note: 'placebo', at: '2026-11-27T11:00:00.000Z' });
    const d = gateTask(t, [of(t), of(t), against], GATE);
    expect(d).toMatchObject({ published: false, reason: 'replays-do-not-replicate' });
    expect(d.detail).toMatch(
      new RegExp(
        `^1 of 3 conclusive replays do not replicate \\(the gate needs 100% of them to replicate\\); replay ${against.id.slice(0, 8)} \\(2026-11-27 11:00Z, AMD EPYC, 2 CPUs, kernel 6\\.1\\.0, placebo\\): workload-does-not-replicate: bench\\.time_x: the replay calls it unchanged`,
      ),
    );
    // a share below 1 lets it in
    expect(gateTask(t, [of(t), of(t), against], { minReplays: 1, minReplicatedShare: 0.6 }).published).toBe(true);
  });

  it('counts neither inconclusive nor failed replays, and needs minReplays replicating ones; minReplays 0 turns the gate off', () => {
    const weak = [of(t, { outcomes: { 'bench.time_x': 'inconclusive' } }), of(t, { verdict: 'failed', outcomes: {} })];
    expect(gateTask(t, weak, GATE)).toMatchObject({
      published: false,
      reason: 'too-few-replicating-replays',
      detail: '0 replicating replays of the 1 needed (1 inconclusive, 1 failed)',
    });
    expect(gateTask(t, [...weak, of(t)], GATE).published).toBe(true);
    expect(gateTask(t, [of(t)], { minReplays: 2, minReplicatedShare: 1 })).toMatchObject({
      published: false,
      reason: 'too-few-replicating-replays',
    });
    expect(gateTask(t, [], { minReplays: 0, minReplicatedShare: 1 })).toMatchObject({
      published: true,
      detail: 'no gate (minReplays 0); not replayed',
    });
  });
});

describe('a task’s replays summed up', () => {
  it('by verdict, machines (first seen first) and per workload, the same id once', () => {
    const t = task(2);
    const a = of(t, { outcomes: { w1: 'replicates', w2: 'replicates' } });
    const b = of(t, {
      outcomes: { w1: 'replicates', w2: 'inconclusive' },
      machine: { cpu_model: 'Intel Xeon', cpus: 8 },
      at: '2026-11-28T00:00:00.000Z',
    });
    const merged = mergeReplays([b, a], [a]);
    expect(merged.map((r) => r.id)).toEqual([a.id, b.id]);
    const s = summarizeReplays(merged, monthTaskDigest(t));
    expect(s).toMatchObject({ count: 2, stale: 0, machines: ['AMD EPYC, 2 CPUs, kernel 6.1.0', 'Intel Xeon, 8 CPUs, kernel 6.1.0'] });
    expect(s.byVerdict).toEqual({ replicates: 1, 'does-not-replicate': 0, inconclusive: 1, failed: 0 });
    expect(s.workloads).toEqual([
      { name: 'w1', judged: 2, replicated: 2 },
      { name: 'w2', judged: 2, replicated: 1 },
    ]);
    expect(s.replicatedWorkloads).toEqual(['w1']);
    expect(replaySummaryLine(s)).toBe('2 replays (1 replicate, 1 inconclusive) on 2 machines');
  });
});

describe('replays kept in task folders and in the store', () => {
  it('are written as replays/<id>.json and read back; unreadable files are named, not fatal', () => {
    const dir = tempDir('replay-files-');
    const r = of(task(3));
    const path = writeFolderReplay(dir, r);
    expect(path).toBe(join(dir, REPLAYS_DIR, `${r.id}.json`));
    writeFileSync(join(dir, REPLAYS_DIR, 'junk.json'), '{"format": "x"}');
    const back = readFolderReplays(dir);
    expect(back.records).toEqual([r]);
    expect(back.problems).toEqual([expect.stringMatching(/^junk\.json: format: /)]);
    expect(readFolderReplays(join(dir, 'absent'))).toEqual({ records: [], problems: [] });
  });

  it('are stored once per id, listed per task, and give each task key its machine times', () => {
    const db = openStore(':memory:');
    const store = new ReplayStore(db);
    const a = of(task(4), { machineMs: 1000, at: '2026-11-27T10:00:00.000Z' });
    const b = of(task(4), { machineMs: 2000, at: '2026-11-27T11:00:00.000Z' });
    expect(store.save(a, 'replayed')).toBe(true);
    expect(store.save(a, 'imported')).toBe(false);
    expect(store.save(b, 'imported')).toBe(true);
    expect(store.list('a__b-4')).toEqual([a, b]);
    expect(store.list('a__b-5')).toEqual([]);
    expect(store.machineTimes()).toEqual(new Map([['a/b#4', [1000, 2000]]]));
    db.close();
  });

  it('survive emit writing the month again (a task folder’s replays/ is carried over)', () => {
    const out = tempDir('replay-month-');
    writeMonth(out, '2025-04', [task(6)], '2026-01-01T00:00:00.000Z', 'perfmine 1');
    const r = of(task(6));
    writeFolderReplay(join(out, '2025-04', 'a__b-6'), r);
    writeMonth(out, '2025-04', [task(6), task(7)], '2026-01-02T00:00:00.000Z', 'perfmine 1');
    expect(readFolderReplays(join(out, '2025-04', 'a__b-6')).records).toEqual([r]);
    // the manifest does not list them (emit does not make them)
    expect(readFileSync(join(out, '2025-04', 'manifest.json'), 'utf8')).not.toContain(REPLAYS_DIR);
    // a task no longer emitted leaves nothing behind
    writeMonth(out, '2025-04', [task(7)], '2026-01-03T00:00:00.000Z', 'perfmine 1');
    expect(existsSync(join(out, '2025-04', 'a__b-6'))).toBe(false);
  });
});

describe('the dataset with the gate', () => {
  it('holds the published tasks with their replays, and the card lists each task’s replays and the ones left out with the reason', () => {
    const [t1, t2] = [task(8), task(9)];
    const r1 = of(t1);
    const decisions = [gateTask(t1, [r1], GATE), gateTask(t2, [of(t2, { outcomes: { 'bench.time_x': 'does-not-replicate' } })], GATE)];
    const month: PublishedMonth = {
      month: '2025-04',
      tasks: [t1],
      funnel: { collected: 2, filtered: 2, classified: 2, built: 2, validated: 2, emitted: 2 },
      gate: { options: GATE, decisions },
    };
    const files = datasetFiles([month]);
    expect(JSON.parse(files.get(`tasks/2025-04/a__b-8/replays/${r1.id}.json`) as string)).toEqual(r1);
    expect([...files.keys()].filter((k) => k.includes('a__b-9'))).toEqual([]);
    const card = datasetCard([month]);
    expect(card).toContain('## Replays');
    expect(card).toContain(
      'A task is published when at least 1 replay of its current folder replicates and at least 100% of its conclusive replays do.',
    );
    expect(card).toContain('| a__b-8 | 1 replay (1 replicate) on 1 machine | AMD EPYC, 2 CPUs, kernel 6.1.0 | bench.time_x (1/1) |');
    expect(card).toContain('Left out by the gate (1 task):');
    expect(card).toMatch(/\| a__b-9 \| 2025-04 \| replays-do-not-replicate \| 1 of 1 conclusive replays do not replicate/);
    // the card's sections stay in order: the replays before the licences
    expect(card.indexOf('## Replays')).toBeLessThan(card.indexOf('## Licences'));
  });

  it('names a task whose metadata.json cannot be read instead of counting it as 0 of 0 comparisons', () => {
    // tasks as emit writes them (the card reads their metadata with the one reader)
    const good = MONTH_TASKS[0]!;
    const broken = { ...MONTH_TASKS[1]!, files: { ...MONTH_TASKS[1]!.files, 'metadata.json': '{"measurement": {"false_positives": ' } };
    const funnel = { collected: 2, filtered: 2, classified: 2, built: 2, validated: 2, emitted: 2 };
    const card = datasetCard([{ month: '2025-04', tasks: [good, broken], funnel }]);
    expect(card).toContain(`Not counted: the \`metadata.json\` of ${broken.row.instance_id} could not be read; write the folder again`);
    expect(datasetCard([{ month: '2025-04', tasks: [good], funnel }])).not.toContain('Not counted');
  });
});
