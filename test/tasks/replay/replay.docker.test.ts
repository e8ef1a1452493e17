import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplayStore } from '../../../cache/replays.js';
import { openStore, type Db } from '../../../cache/store.js';
import { runPublish } from '../../../pipeline/cli/commands/publish.js';
import { createContext } from '../../../pipeline/context.js';
import { readCredentials } from '../../../pipeline/credentials.js';
import { createSampleRepo, type SampleRepo } from '../../../pipeline/demo/sample-repo.js';
import { Metrics } from '../../../pipeline/metrics.js';
import { runPipeline } from '../../../pipeline/orchestrate.js';
import { DockerService } from '../../../pipeline/services/docker.js';
import { monthWindow } from '../../../pipeline/window.js';
import { readFolderReplays } from '../../../pipeline/concepts/replay-files.js';
import type { ReplayRecord } from '../../../pipeline/concepts/records/replay-record.js';
import { replayTask, type ReplaySettings } from '../../../tasks/replay/replay-task.js';
import { readTaskFolder } from '../../../tasks/replay/task-folder.js';
import { measurementSlot } from '../../helpers/measure-slot.js';
import { memoryLogger, tempDir, testConfig, testLabel } from '../../synthesize/harness.js';

/**
 * Issue 30's replay, on the real Docker engine: the sample repository's far faster fib (#101,
 * about 1000x) through every stage with a short protocol (4 rounds), then its emitted folder
 * copied elsewhere and replayed from the copy alone (`docker build --no-cache` of the folder, an
 * empty store): time_fib replicates in both replays (the second reuses the build), and the
 * record holds the machine, the protocol and the times. A copy whose expert.patch is a placebo (a
 * comment in the package, and the benchmark made cheap, which is not applied) does not replicate: time_fib is unchanged although the replay could see far smaller
 * speedups. Publish keeps #101 (its placebo copy's replay is of another folder, not counted) and,
 * on a store whose emitted #101 carries the placebo patch, leaves it out naming the replay.
 * The speedup asserted is far beyond any noise (a 1000x speedup against none), but a replay runs
 * the task's own verifier, whose hack checks time probes of the working side: beside the attack
 * suite's CPU hogs (the shared slot), one of the two replays of the honest #101 was judged
 * `memoised` and credited 1.000x (a CI rehearsal of this stop; alone it replicated every time, as
 * the portable suite's oracle read 0 beside them last stop). So it measures alone, and what the
 * checks do under a neighbour's load is for the verifier to settle (see the stop's note).
 */
measurementSlot('exclusive');

const REPO = 'fixture/fastmath';
const BASE_IMAGE = 'perfmine/base:bookworm';
const FIB = 'bench_core.time_fib';
const label = testLabel('replay');
const docker = new DockerService({ runLabel: label, metrics: new Metrics() });
const dir = tempDir('replay-docker');
const out = join(dir, 'out');
const dbPath = join(dir, 'perfmine.db');
const { log, lines } = memoryLogger('info');
const config = testConfig(dbPath, {
  out,
  llm: { mode: 'none' },
  docker: { baseImage: BASE_IMAGE, cpus: 1, memoryMb: 2048, pidsLimit: 512, concurrency: 1 },
  validate: { harness: { rounds: 4 } },
});

let sample: SampleRepo;
let db: Db;
let emitted: string;
let replays: ReplayRecord[] = [];
let placebo: ReplayRecord[] = [];

function settings(store: ReplayStore, times: number, noCache: boolean): ReplaySettings {
  return { docker, config, log, store, times, indexUrl: null, noCache, keepImages: false, note: null, version: 'test' };
}

/**
 * A patch that changes a comment only in the package, on the base commit of #101, and makes the
 * benchmark itself cheap (time_fib calls fib(2)): a change the replay must not apply, as validate
 * does not (both sides run the base's suite), or time_fib would look far faster.
 */
function placeboPatch(baseSha: string): string {
  const work = join(dir, 'placebo-work');
  execFileSync('git', ['clone', '-q', sample.path, work]);
  execFileSync('git', ['-C', work, 'checkout', '-q', baseSha]);
  const core = join(work, 'fastmath', 'core.py');
  writeFileSync(core, `${readFileSync(core, 'utf8')}\n# a comment changes nothing\n`);
  const bench = join(work, 'benchmarks', 'bench_core.py');
  const cheap = readFileSync(bench, 'utf8').replace('fastmath.fib(20)', 'fastmath.fib(2)');
  expect(cheap).toContain('fastmath.fib(2)\n');
  writeFileSync(bench, cheap);
  return execFileSync('git', ['-C', work, 'diff'], { encoding: 'utf8' });
}

beforeAll(async () => {
  sample = createSampleRepo(join(dir, 'fastmath'), '2025-04');
  db = openStore(dbPath);
  const ctx = createContext({ config, credentials: readCredentials({}), db, log, metrics: new Metrics(), services: { docker } });
  const result = await runPipeline(ctx, {
    window: monthWindow('2025-04'),
    repos: [REPO],
    prs: [101],
    source: { kind: 'git', path: sample.path },
  });
  if (result.reports.some((r) => Object.keys(r.failed).length > 0)) console.log(lines.join(''));
  emitted = join(out, '2025-04', 'fixture__fastmath-101');

  // the folder alone, copied elsewhere; an empty store
  const copy = join(dir, 'copies', 'fixture__fastmath-101');
  mkdirSync(join(dir, 'copies'), { recursive: true });
  cpSync(emitted, copy, { recursive: true });
  const fresh = openStore(join(dir, 'replay.db'));
  replays = [...(await replayTask(copy, settings(new ReplayStore(fresh), 2, true))).records];
  for (const r of replays)
    console.log(`replay ${r.verdict} ${r.workloads.find((w) => w.name === FIB)?.why} ${JSON.stringify(r.durations)}`);

  const placeboCopy = join(dir, 'placebo', 'fixture__fastmath-101');
  cpSync(emitted, placeboCopy, { recursive: true });
  writeFileSync(join(placeboCopy, 'expert.patch'), placeboPatch(readTaskFolder(emitted).baseCommit));
  placebo = [...(await replayTask(placeboCopy, settings(new ReplayStore(fresh), 1, false))).records];
  for (const r of placebo) console.log(`placebo ${r.verdict} ${r.workloads.find((w) => w.name === FIB)?.why}`);
  fresh.close();
}, 3_600_000);

afterAll(async () => {
  db?.close();
  await docker.removeLabelled(label);
  rmSync(dir, { recursive: true, force: true });
}, 300_000);

describe('perfmine replay of an emitted task, from a copy of its folder alone (real Docker engine)', () => {
  it('replicates the improved workload in each replay, the second on the first one’s build', () => {
    expect(replays).toHaveLength(2);
    for (const r of replays) {
      expect(r, r.detail ?? '').toMatchObject({
        verdict: 'replicates',
        reason: null,
        judged: 1,
        replicated: 1,
        replicated_share: 1,
        replicated_workloads: [FIB],
      });
      const fib = r.workloads.find((w) => w.name === FIB)!;
      expect(fib.outcome).toBe('replicates');
      expect(fib.replay!.change).toBe('improved');
      expect(fib.replay!.speedup!).toBeGreaterThan(20);
      expect(fib.replay!.interval![0]).toBeLessThanOrEqual(fib.replay!.speedup!);
      // the untouched workloads are reported, not judged
      expect(r.workloads.filter((w) => w.outcome !== null).map((w) => w.name)).toEqual([FIB]);
      // the verifier measures the task's improved workload in REWARD_ROUNDS (20) rounds, the others in the protocol's 4
      expect(r.protocol).toMatchObject({ engine: 'perfmine', rounds: 4, samples: 5, clock: 'cpu', roundsMeasured: 20 });
      expect(r.build.scan).toMatchObject({ verdict: 'accepted', findings: [] });
    }
    expect(replays.map((r) => r.build.reused)).toEqual([false, true]);
    expect(replays[0]!.build.no_cache).toBe(true);
    expect(replays[0]!.durations.build_ms).toBeGreaterThan(0);
    expect(replays[1]!.durations.build_ms).toBe(0);
    expect(replays[0]!.durations.machine_ms).toBeGreaterThan(replays[0]!.durations.measure_ms);
    expect(new Set(replays.map((r) => r.id)).size).toBe(2);
  });

  it('records the machine: CPU, CPUs, the cpuset used, kernel, Docker and its limits, the image’s Python, the load', () => {
    const m = replays[0]!.machine;
    expect(m.cpu_model).toEqual(expect.any(String));
    expect(m.cpus).toBeGreaterThanOrEqual(1);
    expect(m.kernel).toMatch(/^\d+\.\d+/);
    expect(m.image_python).toMatch(/^Python 3\.\d+/);
    expect(m.docker.server_version).toEqual(expect.any(String));
    expect(m.docker.limits).toEqual({ cpus: 1, memory_mb: 2048, pids_limit: 512 });
    if (m.cpus! > 1) expect(m.cpuset).toBe(String(m.cpus! - 1));
    expect(m.cpuset_effective).toBe(m.cpuset ?? m.cpuset_effective);
    expect(m.load_average.before).toHaveLength(3);
    expect(m.load_average.after).toHaveLength(3);
  });

  it('writes each record into the folder replayed and its store, and leaves no image behind', async () => {
    const copy = join(dir, 'copies', 'fixture__fastmath-101');
    expect(
      readFolderReplays(copy)
        .records.map((r) => r.id)
        .sort(),
    ).toEqual(replays.map((r) => r.id).sort());
    const fresh = openStore(join(dir, 'replay.db'));
    expect(
      new ReplayStore(fresh)
        .list('fixture__fastmath-101')
        .map((r) => r.id)
        .sort(),
    ).toEqual([...replays, ...placebo].map((r) => r.id).sort());
    fresh.close();
    // the replayed folder is the emitted one (the same digest); the placebo's is another
    expect(replays[0]!.folder.digest).toBe(readTaskFolder(emitted).digest);
    expect(placebo[0]!.folder.digest).not.toBe(replays[0]!.folder.digest);
    const images = await docker.docker.listImages({ filters: { reference: ['perfmine/replay-*'] } });
    expect(images.filter((i) => (i.Labels ?? {})['org.perfmine'] === label)).toEqual([]);
  });

  it('does not replicate a placebo expert patch: fib unchanged though the replay could see far less', () => {
    expect(placebo).toHaveLength(1);
    const r = placebo[0]!;
    expect(r).toMatchObject({ verdict: 'does-not-replicate', reason: 'workload-does-not-replicate', replicated: 0, replicated_share: 0 });
    const fib = r.workloads.find((w) => w.name === FIB)!;
    expect(fib.outcome).toBe('does-not-replicate');
    expect(fib.replay!.change).toBe('unchanged');
    expect(fib.why).toContain('though it could see speedups from');
  });

  it('publish keeps #101 on its replays (the placebo copy’s is not counted), and leaves out a #101 that carries the placebo, with the reason', async () => {
    const store = new ReplayStore(db);
    for (const r of [...replays, ...placebo]) store.save(r, 'imported');
    const published = await runPublish({ to: join(dir, 'dataset') }, { db: dbPath, out, json: true });
    expect(published.months).toEqual([{ month: '2025-04', tasks: 1 }]);
    expect(published.leftOut).toEqual([]);
    const card = readFileSync(join(dir, 'dataset', 'README.md'), 'utf8');
    expect(card).toMatch(
      /\| fixture__fastmath-101 \| 2 replays \(2 replicate\) on 1 machine; 1 of another version of the folder not counted \| .* \| bench_core\.time_fib \(2\/2\) \|/,
    );

    // the same store, but #101 emitted with the placebo patch: its folder is the placebo copy
    const placeboDb = join(dir, 'placebo.db');
    db.exec(`VACUUM INTO '${placeboDb}'`);
    const other = openStore(placeboDb);
    other
      .prepare("UPDATE stage_items SET output = json_set(output, '$.files.\"expert.patch\"', ?) WHERE stage = 'emit' AND key = ?")
      .run(readFileSync(join(dir, 'placebo', 'fixture__fastmath-101', 'expert.patch'), 'utf8'), `${REPO}#101`);
    other.close();
    const gated = await runPublish({ to: join(dir, 'dataset-placebo') }, { db: placeboDb, out: join(dir, 'no-out'), json: true });
    expect(gated.months).toEqual([{ month: '2025-04', tasks: 0 }]);
    expect(gated.leftOut).toHaveLength(1);
    expect(gated.leftOut[0]).toMatchObject({ instanceId: 'fixture__fastmath-101', reason: 'replays-do-not-replicate' });
    expect(gated.leftOut[0]!.detail).toContain(`replay ${placebo[0]!.id.slice(0, 8)}`);
    expect(gated.leftOut[0]!.detail).toContain('2 replays of another version of its folder not counted');
    expect(readFileSync(join(dir, 'dataset-placebo', 'README.md'), 'utf8')).toMatch(
      /\| fixture__fastmath-101 \| 2025-04 \| replays-do-not-replicate \| /,
    );
  });
});
