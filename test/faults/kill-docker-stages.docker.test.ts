import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSampleRepo, type SampleRepo } from '../../pipeline/demo/sample-repo.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { waitForLine } from '../helpers/cli.js';
import { tempDir, testLabel } from '../synthesize/harness.js';
import { copyDb, killPoint, runToEnd, startCli } from './kill.js';
import { measurementSlot } from '../helpers/measure-slot.js';

/**
 * SIGKILL at a seeded point of synthesize, validate and emit (issue 9). Each stage is first run
 * to the end from the same starting database (the reference), with every container it creates
 * (and its role) and every file it writes counted; then, from a copy of that starting database,
 * the same command is held at a seeded event (a container about to be created, a file about to
 * be written: test/faults/fixtures/labelled-cli.ts), killed with SIGKILL, and run again to the
 * end. Synthesize is killed at a seeded container after its preflight (so a build or a
 * verification is cut). Validate is killed in the middle of a measurement, once the seed's
 * harness round has been logged: the harness's three long-lived workers (base, expert,
 * calibration) are running, and are left behind for the rerun to remove. Emit is killed
 * at two seeded file writes. The rerun must reach the reference's decisions:
 * - synthesize: the same verified environment (script, image tag) for every commit;
 * - validate: the same decision for every candidate and the same perfmine verdict on the
 *   workloads the patches change (a rerun measures again, so measured numbers are new);
 * - emit: the month's files byte for byte (manifest.json aside: it holds the production time);
 * and no container of the run may be left behind. Each kill of synthesize or validate reruns
 * the stage (a validate rerun measures again), so there is one of each: validate's short
 * containers (expert build, verification, tests, snapshot) are of synthesize's kind, and a kill
 * as the workers start is much as the kill in the middle of a measurement. Those two validate
 * kills and a second synthesize kill (its seed chose the same container as the first) were
 * dropped: they cost CI a quarter of an hour. A long suite: `npm run test:long` runs it,
 * `npm test` does not (vitest.long.config.ts says why).
 */
measurementSlot('shared');
const LABELLED_CLI = fileURLToPath(new URL('./fixtures/labelled-cli.ts', import.meta.url));
const SEEDS = [7, 23];
/** Harness rounds per candidate (validate.harness.rounds, its minimum). */
const ROUNDS = 3;
const BASE_IMAGE = 'perfmine/base:bookworm';
const MONTH = '2025-04';
/** One candidate, #101 (fib far faster: kept, a task to emit): each rerun of validate measures it anew. */
const PRS = ['--pr', '101'];
const dir = tempDir('kill-docker');
const label = testLabel('kill-docker');
const docker = new DockerService({ runLabel: label });
const config = join(dir, 'perfmine.config.json');
let sample: SampleRepo;

const db = (name: string) => join(dir, `${name}.db`);

function cli(args: readonly string[], database: string, extra: Record<string, string> = {}, logLevel = 'warn') {
  return {
    args: ['--config', config, '--db', database, '--log-level', logLevel, ...args],
    options: { script: LABELLED_CLI, env: { PERFMINE_TEST_DOCKER_LABEL: label, PERFMINE_BASE_IMAGE: BASE_IMAGE, ...extra } },
  };
}

async function toEnd(args: readonly string[], database: string, extra: Record<string, string> = {}): Promise<void> {
  const c = cli(args, database, extra);
  const r = await runToEnd(c.args, c.options);
  if (r.code !== 0) throw new Error(`perfmine ${args.join(' ')} exited ${r.code}:\n${r.stderr.slice(-3000)}`);
}

/** Runs the command from `start` held at the k-th event, kills it there, then runs it to the end. */
async function killAndResume(
  args: readonly string[],
  start: string,
  name: string,
  kind: 'container' | 'write',
  k: number,
): Promise<string> {
  const target = db(name);
  copyDb(start, target);
  const c = cli(args, target, { PERFMINE_TEST_HOLD: `${kind}:${k}` });
  const running = startCli(c.args, c.options);
  await waitForLine(running.child.stdout, new RegExp(`^holding ${kind} ${k}$`));
  running.kill();
  expect((await running.done).signal).toBe('SIGKILL');
  await toEnd(args, target);
  return target;
}

/** The events of a kind a reference run logged, in order: for containers, each one's role. */
function events(file: string, kind: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l === kind || l.startsWith(`${kind} `))
    .map((l) => l.slice(kind.length + 1));
}

const isWorker = (role: string) => role.startsWith('harness-');

/** The k-th event (1-based) of the whole sequence that is the seed's choice among the events `among` accepts. */
function killPointAmong(seed: number, roles: readonly string[], among: (role: string) => boolean): number {
  const indices = roles.flatMap((r, i) => (among(r) ? [i + 1] : []));
  return indices[killPoint(seed, indices.length) - 1]!;
}

function rows<T>(path: string, sql: string): T[] {
  const d = new Database(path, { readonly: true });
  try {
    return d.prepare(sql).all() as T[];
  } finally {
    d.close();
  }
}

/** What synthesize decided: per commit, its status and verified environment (not which attempt found it). */
function synthesized(path: string) {
  return rows<{ key: string; status: string; reason: string | null; output: string | null }>(
    path,
    "SELECT key, status, reason, output FROM stage_items WHERE stage = 'synthesize' ORDER BY key",
  ).map((r) => {
    const out = r.output ? (JSON.parse(r.output) as { script: string; imageTag: string }) : null;
    return { key: r.key, status: r.status, reason: r.reason, script: out?.script ?? null, imageTag: out?.imageTag ?? null };
  });
}

/** What validate decided: per candidate, and perfmine's verdict on the workloads the patches change. */
function validated(path: string) {
  return {
    ledger: rows(path, "SELECT key, status, reason FROM stage_items WHERE stage = 'validate' ORDER BY key"),
    decisions: rows(path, 'SELECT key, decision FROM validations ORDER BY key'),
    verdicts: rows(
      path,
      "SELECT key, workload, paired_change FROM workload_verdicts WHERE workload LIKE '%time_fib%' OR workload LIKE '%count_primes%' ORDER BY key, workload",
    ),
  };
}

function files(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name !== 'manifest.json') out.set(relative(root, p), readFileSync(p));
    }
  };
  walk(root);
  return out;
}

async function leftovers(): Promise<string[]> {
  return (await docker.containers(label)).map((c) => `${c.Id.slice(0, 12)} ${c.State}`);
}

describe('SIGKILL at a seeded point of synthesize, validate and emit (real Docker engine)', () => {
  const reference = { synthesize: [] as string[], validate: [] as string[], emit: [] as string[] };
  const starts = { synthesize: db('start-synthesize'), validate: db('start-validate'), emit: db('start-emit') };
  const refOut = join(dir, 'out-reference');

  beforeAll(async () => {
    sample = createSampleRepo(join(dir, 'repo'), MONTH);
    writeFileSync(
      config,
      JSON.stringify({
        llm: { mode: 'none' },
        docker: { cpus: 1, memoryMb: 2048, concurrency: 1 },
        synthesize: { offline: true, buildNetwork: 'none' },
        // A candidate with a large effect (#101 far faster), so a rerun's new measurements reach
        // the same verdicts; fewer harness rounds keep the test short, and workers not pinned to
        // the last core leave it to the suites measuring beside this one.
        validate: { harness: { rounds: ROUNDS, cpus: 'none' } },
      }),
    );
    const source = ['--month', MONTH, '--source', `git:${sample.path}`, '--repo', 'demo/fastmath'];
    await toEnd(['run', ...source, '--until-stage', 'classify'], starts.synthesize);
    // The reference: each stage to the end, its events counted, the state before the next kept.
    const reach = db('reference');
    copyDb(starts.synthesize, reach);
    await toEnd(['stage', 'synthesize', ...source, ...PRS], reach, { PERFMINE_TEST_EVENT_LOG: join(dir, 'events-synthesize') });
    copyDb(reach, starts.validate);
    await toEnd(['stage', 'validate', ...source, ...PRS], reach, { PERFMINE_TEST_EVENT_LOG: join(dir, 'events-validate') });
    copyDb(reach, starts.emit);
    await toEnd(['--out', refOut, 'stage', 'emit', ...source], reach, { PERFMINE_TEST_EVENT_LOG: join(dir, 'events-emit') });
    reference.synthesize = events(join(dir, 'events-synthesize'), 'container');
    reference.validate = events(join(dir, 'events-validate'), 'container');
    reference.emit = events(join(dir, 'events-emit'), 'write');
  }, 1_200_000);

  afterAll(async () => {
    await docker.removeLabelled(label);
  }, 300_000);

  const source = () => ['--month', MONTH, '--source', `git:${sample.path}`, '--repo', 'demo/fastmath'];

  it('the reference emits #101 only, with containers and file writes to choose kill points from', () => {
    console.log(
      `reference containers: synthesize ${reference.synthesize.join(' ')}; validate ${reference.validate.join(' ')}; emit: ${reference.emit.length} writes`,
    );
    expect(reference.synthesize.length).toBeGreaterThan(2);
    // the harness's three workers, and the expert build, tests and snapshots
    expect(reference.validate.filter(isWorker).sort()).toEqual(['harness-base', 'harness-calibration', 'harness-expert']);
    expect(reference.validate.filter((r) => !isWorker(r)).length).toBeGreaterThan(2);
    expect(reference.emit.length).toBeGreaterThan(3);
    expect(validated(db('reference')).decisions).toEqual([{ key: 'demo/fastmath#101', decision: 'kept' }]);
    expect(readFileSync(join(refOut, MONTH, 'tasks.jsonl'), 'utf8')).toMatch(/^\{"instance_id":"demo__fastmath-101"/);
  });

  it(`synthesize killed at a seeded container after the preflight (seed ${SEEDS[1]}) resumes to the same environments`, async () => {
    const k = killPointAmong(SEEDS[1]!, reference.synthesize, (role) => role !== 'preflight');
    console.log(`synthesize held at container ${k} of ${reference.synthesize.length}: ${reference.synthesize[k - 1]}`);
    const resumed = await killAndResume(['stage', 'synthesize', ...source(), ...PRS], starts.synthesize, 'synthesize', 'container', k);
    expect(synthesized(resumed)).toEqual(synthesized(starts.validate));
    expect(await leftovers()).toEqual([]);
  }, 900_000);

  it(`validate killed in the middle of a measurement, after a seeded harness round (seed ${SEEDS[0]}), resumes to the same decisions and verdicts`, async () => {
    // a round before the last but one: the workers are still measuring when the kill lands
    const round = killPoint(SEEDS[0]!, ROUNDS - 2);
    const target = db('validate-round');
    copyDb(starts.validate, target);
    const c = cli(['stage', 'validate', ...source(), ...PRS], target, { PERFMINE_LOG_FORMAT: 'json' }, 'info');
    const running = startCli(c.args, c.options);
    const line = await waitForLine(running.child.stderr, new RegExp(`"round":${round},.*"msg":"harness round"`));
    running.kill();
    expect((await running.done).signal).toBe('SIGKILL');
    console.log(`validate killed after: ${line.slice(0, 300)}`);
    // the killed process's three workers are left behind, to be removed by the rerun
    const workers = (await docker.containers(label)).map((w) => w.Labels?.['org.perfmine.role']).sort();
    expect(workers).toEqual(['harness-base', 'harness-calibration', 'harness-expert']);
    await toEnd(['stage', 'validate', ...source(), ...PRS], target);
    expect(validated(target)).toEqual(validated(starts.emit));
    expect(await leftovers()).toEqual([]);
  }, 900_000);

  for (const seed of SEEDS) {
    it(`emit killed at a seeded file write (seed ${seed}) resumes to the same files, byte for byte`, async () => {
      const k = killPoint(seed, reference.emit.length);
      const out = join(dir, `out-emit-${seed}`);
      await killAndResume(['--out', out, 'stage', 'emit', ...source()], starts.emit, `emit-${seed}`, 'write', k);
      const got = files(join(out, MONTH));
      const want = files(join(refOut, MONTH));
      expect([...got.keys()]).toEqual([...want.keys()]);
      for (const [path, bytes] of want) expect(got.get(path)?.equals(bytes), path).toBe(true);
    }, 300_000);
  }
});
