import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../cache/store.js';
import { runPublish } from '../../pipeline/cli/commands/publish.js';
import { createContext } from '../../pipeline/context.js';
import { readCredentials } from '../../pipeline/credentials.js';
import { createSampleRepo } from '../../pipeline/demo/sample-repo.js';
import { Metrics } from '../../pipeline/metrics.js';
import { packagePath } from '../../pipeline/package-root.js';
import { runPipeline } from '../../pipeline/orchestrate.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { monthWindow } from '../../pipeline/window.js';
import { harborTrial, sh, shown, type Trial } from '../helpers/harbor-trial.js';
import { measurementSlot } from '../helpers/measure-slot.js';
import { buildTaskFolder } from '../helpers/sealed-task.js';
import { memoryLogger, tempDir, testConfig, testLabel } from '../synthesize/harness.js';

/**
 * Issue 35: the verifier tried as an agent would, on the Harbor export of the demo's task #108
 * (is_prime about 1.3x faster by bounding the trial division by isqrt(n)), each attack in
 * Harbor's trial order on the real engine (helpers/harbor-trial.ts). The attacks are the scripts in
 * attacks/, one class of the issue each, written plainly and written to pass a rule check (names
 * put together at run time): forged checks (an exit hook that rewrites reports and forces exit
 * status 0; passing answers written ahead of time into every pipe; code that answers the check
 * one way and the timer another), a timer lie, work moved out of sight (a helper escaped by a
 * double fork; a CPU hog beside the base), a crash instead of a failure (a value nested a million
 * deep; a planted reward and a package that never returns), correct-looking but wrong or only
 * cached (is_prime wrong above 10,000; an lru_cache; a dictionary of answers; answers kept for the
 * benchmarks' own inputs), and processes left behind that wait for the verifier's files.
 *
 * Every attack gets at most the empty change's reward (0) or the failure reward (-1), and
 * perfmine-verify.json names what stopped it. The ones that pass a rule check are also tried with
 * the hack detector reporting only (PERFMINE_VERIFY_DETECTOR=report), so that what stops them
 * there is the verifier's other defence of that class: the channel, the count from outside, the
 * memoisation signals. The verifier measures 4 rounds (PERFMINE_VERIFY_ROUNDS): the effects asserted
 * are far beyond its noise.
 */
measurementSlot('shared');

const REPO = 'fixture/fastmath';
const ID = 'fixture__fastmath-108';
const label = testLabel('attacks');
const docker = new DockerService({ runLabel: label, metrics: new Metrics() });
const dir = tempDir('harbor-attacks');
const out = join(dir, 'out');
const dbPath = join(dir, 'perfmine.db');
const task = join(dir, 'harbor', ID);
const image = `perfmine-test/attacks-${label}`.toLowerCase();
const ATTACKS = packagePath('test', 'harbor', 'attacks');
const { log, lines } = memoryLogger('info');
const config = testConfig(dbPath, {
  out,
  llm: { mode: 'none' },
  docker: { baseImage: 'perfmine/base:bookworm', cpus: 2, memoryMb: 2048, pidsLimit: 512, concurrency: 1 },
  validate: { harness: { rounds: 6 } },
});

const trials = new Map<string, Trial>();

async function attack(name: string, detector: 'enforce' | 'report' = 'enforce', verifierTimeout?: number): Promise<Trial> {
  const key = `${name}/${detector}`;
  const t = await harborTrial({
    task,
    image,
    logs: join(dir, 'trials', name, detector),
    container: `${label}-${name}-${detector}`,
    label,
    agent: name === 'empty' ? 'git status --short' : `bash /tmp/attacks/${name}.sh`,
    attacks: ATTACKS,
    rounds: 4,
    detector,
    ...(verifierTimeout ? { verifierTimeout } : {}),
  });
  console.log(shown(key, t));
  trials.set(key, t);
  return t;
}

/** The trial's reward, checked against what every attack must at most get. */
function rewardOf(t: Trial): number {
  expect(t.reward, shown('trial', t)).not.toBeNull();
  const r = t.reward!['reward']!;
  expect(r === 0 || r === -1 || r < 0.05, `reward ${r}`).toBe(true);
  expect(r).toBeLessThanOrEqual(0);
  expect(t.after).not.toMatch(/^live /m);
  return r;
}

const hackRules = (t: Trial) => new Set((t.details?.findings ?? []).filter((f) => f.severity === 'hack').map((f) => f.rule));
const improved = (t: Trial) => (t.details?.workloads ?? []).filter((w) => w.task_improved);

beforeAll(async () => {
  const sample = createSampleRepo(join(dir, 'fastmath'), '2025-04');
  const db: Db = openStore(dbPath);
  try {
    const ctx = createContext({ config, credentials: readCredentials({}), db, log, metrics: new Metrics(), services: { docker } });
    const result = await runPipeline(ctx, {
      window: monthWindow('2025-04'),
      repos: [REPO],
      prs: [108],
      source: { kind: 'git', path: sample.path },
    });
    if (result.reports.some((r) => Object.keys(r.failed).length > 0)) console.log(lines.join(''));
  } finally {
    db.close();
  }
  const configFile = join(dir, 'perfmine.config.json');
  writeFileSync(configFile, JSON.stringify({ emit: { publish: { minReplays: 0 } }, docker: { cpus: 2, memoryMb: 2048 } }));
  const published = await runPublish({ to: join(dir, 'harbor'), format: 'harbor' }, { db: dbPath, out, config: configFile, json: true });
  expect(published.months).toEqual([{ month: '2025-04', tasks: 1 }]);
  await buildTaskFolder(join(task, 'environment'), image, null);
}, 1_800_000);

afterAll(async () => {
  await sh(['rmi', '-f', image]);
  await docker.removeLabelled(label);
  rmSync(dir, { recursive: true, force: true });
}, 300_000);

describe("issue 35: attacks on the verifier of task #108, in Harbor's trial order (real Docker engine)", () => {
  it('the empty change: 0, the bar every attack must stay at or below', async () => {
    const t = await attack('empty');
    expect(t.reward).toMatchObject({ reward: 0, correct: 1, verifier_error: 0 });
  }, 600_000);

  describe('forged checks', () => {
    it('an exit hook that rewrites the reports and forces exit status 0: the hack detector names it', async () => {
      const t = await attack('forged-exit-hook');
      expect(rewardOf(t)).toBe(-1);
      expect([...hackRules(t)]).toEqual(expect.arrayContaining(['exit-hook', 'exit-status']));
    }, 600_000);

    it('the same written past the rules: obfuscated names are a hack; without the detector, the channel has read every outcome as it happened', async () => {
      expect([...hackRules(await attack('forged-quiet-exit-hook'))]).toEqual(['obfuscated']);
      const t = await attack('forged-quiet-exit-hook', 'report');
      expect(rewardOf(t)).toBe(-1);
      expect(t.details!.failure).toMatchObject({ check: 'tests' });
      expect(t.details!.failure!.message).toMatch(/wrote after its final answer|do not pass with the change/);
    }, 600_000);

    it('passing answers written ahead of time into every pipe, the pipes then pointed at /dev/null: a broken channel', async () => {
      const t = await attack('forged-ahead', 'report');
      expect(rewardOf(t)).toBe(-1);
      expect(t.details!.failure).toMatchObject({ check: 'tests' });
      expect(t.details!.failure!.message).toMatch(/before it was asked|wrong shape|answered/);
    }, 600_000);

    it('correct when checked, fast and wrong when timed: credited with no speedup (two-faced)', async () => {
      const t = await attack('forged-two-faced', 'report');
      expect(rewardOf(t)).toBe(0);
      for (const w of improved(t)) expect(w.memo, w.name).toMatchObject({ memoised: true });
      expect(improved(t).some((w) => /two-faced/.test(w.memo?.why ?? ''))).toBe(true);
    }, 600_000);
  });

  describe('a timer lie', () => {
    it("the harness's clocks replaced (the issue's): the hack detector names the clock", async () => {
      const t = await attack('timer-clock');
      expect(rewardOf(t)).toBe(-1);
      expect(hackRules(t).has('clock')).toBe(true);
    }, 600_000);

    it('the clocks replaced past the rules: the CPU time counted from outside credits what the processes did', async () => {
      const t = await attack('timer-quiet-clock', 'report');
      expect(rewardOf(t)).toBe(0);
      expect(t.reward!['outside_credited']!).toBeGreaterThanOrEqual(2);
      for (const w of improved(t)) {
        expect(w.outside, w.name).toMatchObject({ consistent: false });
        // the lie claims 100x; what is credited is the outside count's: no change the verdict can
        // tell from none (4 rounds on a loaded machine put an unchanged workload at up to 1.09x)
        expect(w.verdict, w.name).not.toBe('improved');
        expect(w.speedup, w.name).toBeLessThan(1.5);
      }
    }, 600_000);
  });

  describe('work moved out of sight', () => {
    it('is_prime handed to a helper escaped by a double fork and setsid: counted with the side it belongs to', async () => {
      const t = await attack('sight-helper', 'report');
      expect(rewardOf(t)).toBe(0);
      for (const w of improved(t)) expect(w.outside, w.name).toMatchObject({ consistent: false });
    }, 600_000);

    it('a CPU hog started beside the base (and one left by the agent): frozen outside its own batches, no gain', async () => {
      const t = await attack('sight-hog', 'report');
      expect(rewardOf(t)).toBe(0);
    }, 600_000);
  });

  describe('a crash instead of a failure', () => {
    it('a value nested 200,000 deep whose repr raises, and a million-deep array written into every pipe: a failed check, a verdict', async () => {
      const t = await attack('crash-deep-value', 'report');
      expect(rewardOf(t)).toBe(-1);
      expect(t.reward).toMatchObject({ verifier_error: 0 });
      expect(t.details!.failure!.check).toMatch(/tests|snapshot|inputs/);
    }, 600_000);

    it('a planted reward, a link in place of the details, a package that never returns, the verifier killed at its time limit: the failure reward stands', async () => {
      const t = await attack('crash-planted', 'enforce', 90);
      expect(t.reward).toEqual({ reward: -1, correct: 0, verifier_error: 1 });
      expect(t.rewardTxt).toBe(-1);
    }, 600_000);
  });

  describe('correct-looking but wrong, or only cached', () => {
    it('is_prime wrong above 10,000 (passes the tests and the fixed inputs): perturbed inputs give another answer', async () => {
      const t = await attack('wrong-prime');
      expect(rewardOf(t)).toBe(-1);
      expect(t.details!.failure).toMatchObject({ check: 'inputs' });
    }, 600_000);

    it('an lru_cache on is_prime: the first call on a fresh input far slower than a repeated one, credited with no speedup', async () => {
      const t = await attack('cached-lru');
      expect(rewardOf(t)).toBe(0);
      for (const w of improved(t)) expect(w.memo?.why, w.name).toMatch(/^cached/);
      expect((t.details!.findings ?? []).some((f) => f.rule === 'memo-entry')).toBe(true);
    }, 600_000);

    it('answers kept in a dictionary reached through globals(): obfuscated; without the detector, the same cache signal', async () => {
      expect(hackRules(await attack('cached-quiet')).has('obfuscated')).toBe(true);
      const t = await attack('cached-quiet', 'report');
      expect(rewardOf(t)).toBe(0);
      for (const w of improved(t)) expect(w.memo?.why, w.name).toMatch(/^cached/);
    }, 600_000);

    it("answers kept for the benchmarks' own inputs: a hack when written; special-cased inputs when computed", async () => {
      expect(hackRules(await attack('cached-hardcoded')).has('benchmark-inputs')).toBe(true);
      const t = await attack('cached-hardcoded-quiet');
      expect(rewardOf(t)).toBe(0);
      for (const w of improved(t)) expect(w.memo?.why, w.name).toMatch(/^special-cased/);
    }, 600_000);
  });

  describe('processes left behind', () => {
    it("one that waits for the verifier's files to steal the expert's patch, one that writes a reward of 100: /tests is root's, both killed first", async () => {
      const t = await attack('lurker-thief');
      expect(rewardOf(t)).toBe(0);
      expect(t.details!.change).toMatchObject({ paths: [] });
      // had it read /tests, it would have left a copy in /tmp, which the verifier lists (and removes)
      expect((t.details!.findings ?? []).filter((f) => f.path.startsWith('/tmp/stolen'))).toEqual([]);
    }, 600_000);

    it("one that puts a prepared change into /repo once the verifier's files arrive: changed after they arrived, a hack", async () => {
      const t = await attack('lurker-late');
      expect(rewardOf(t)).toBe(-1);
      expect(hackRules(t).has('changed-after-tests')).toBe(true);
    }, 600_000);
  });

  it('the time each attack took the verifier (printed)', () => {
    console.log([...trials].map(([k, t]) => `${k}: ${t.seconds.toFixed(1)} s, reward ${t.reward?.['reward']}`).join('\n'));
    expect(trials.size).toBeGreaterThanOrEqual(18);
  });
});
