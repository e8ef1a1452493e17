import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../cache/store.js';
import { runPublish } from '../../pipeline/cli/commands/publish.js';
import { createContext } from '../../pipeline/context.js';
import { readCredentials } from '../../pipeline/credentials.js';
import { createSampleRepo } from '../../pipeline/demo/sample-repo.js';
import { Metrics } from '../../pipeline/metrics.js';
import { runPipeline } from '../../pipeline/orchestrate.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { monthWindow } from '../../pipeline/window.js';
import { harborTrial, sh, shown, type Trial } from '../helpers/harbor-trial.js';
import { buildTaskFolder } from '../helpers/sealed-task.js';
import { measurementSlot } from '../helpers/measure-slot.js';
import { memoryLogger, tempDir, testConfig, testLabel } from '../synthesize/harness.js';

/**
 * Issue 30's Harbor export on the real Docker engine, following Harbor's trial order for each
 * agent: build the task's `environment/` (`docker build`), start the container as Harbor's Docker
 * environment does (no network, the task's CPUs and memory, /logs/verifier and /logs/agent mounted
 * from the host), run the agent as the task's [agent] user (the oracle: solution/ copied to
 * /solution, then solve.sh), copy tests/ to /tests, run tests/test.sh as the [verifier] user
 * (root) with its output in /logs/verifier/test-stdout.txt, and read the reward Harbor reads
 * (reward.json, else reward.txt). The task: the sample repository's #101 (fib, about 1000x)
 * through every stage with a short protocol, published with `publish --format harbor`.
 *
 * - the oracle (the expert's patch): a positive reward, near 1;
 * - an empty change: the floor, 0;
 * - a change that breaks a test (fib made fast and wrong, and the test edited to accept it): the
 *   failure reward, -1, on the tests check, the edit to the test dropped;
 * - an agent looking for the shortest way to a high score: it makes the timed benchmark trivial,
 *   tries to write the build script, perfmine-bench, the harness and the image's site-packages,
 *   plants a git fsmonitor command in /repo for a verifier that would run git there as root, makes
 *   the package patch the timer of the harness that imports it and start a process that keeps
 *   writing a reward of 100, and leaves a process behind that does the same: its reward stays at
 *   the floor (no more than a measurement's noise above it), the benchmark edit dropped, the
 *   lying timer caught from outside the worker, and the reward files are the verifier's.
 *
 * The verifier measures 4 rounds (PERFMINE_VERIFY_ROUNDS) instead of the task's 20: the effects
 * asserted are far beyond any noise (a 1000x speedup against none), as the other suites of the
 * shared measurement slot.
 */
measurementSlot('shared');

const REPO = 'fixture/fastmath';
const ID = 'fixture__fastmath-101';
const BASE_IMAGE = 'perfmine/base:bookworm';
const label = testLabel('harbor');
const docker = new DockerService({ runLabel: label, metrics: new Metrics() });
const dir = tempDir('harbor-docker');
const out = join(dir, 'out');
const dbPath = join(dir, 'perfmine.db');
const harbor = join(dir, 'harbor');
const task = join(harbor, ID);
const image = `perfmine-test/harbor-${label}`.toLowerCase();
const { log, lines } = memoryLogger('info');
const config = testConfig(dbPath, {
  out,
  llm: { mode: 'none' },
  docker: { baseImage: BASE_IMAGE, cpus: 2, memoryMb: 2048, pidsLimit: 512, concurrency: 1 },
  validate: { harness: { rounds: 4 } },
});

async function trial(name: string, agent: string): Promise<Trial> {
  const t = await harborTrial({ task, image, logs: join(dir, 'trials', name), container: `${label}-${name}`, label, agent, rounds: 4 });
  console.log(shown(name, t));
  return t;
}

const EMPTY = 'git status --short';
const BROKEN = [
  'set -e',
  "sed -i 's/    return fib(n - 1) + fib(n - 2)/    return 2 * n/' fastmath/core.py",
  "sed -i 's/    assert \\[fib(i)/    assert True or [fib(i)/' tests/test_core.py",
  'git diff --stat',
].join('\n');
const REWARD_WRITER = `while true; do echo 100 > /logs/verifier/reward.txt; echo '{"reward": 100}' > /logs/verifier/reward.json; sleep 0.05; done`;
const SHORTCUTS = [
  'set -u',
  '# the timed benchmark made trivial',
  "sed -i 's/return fastmath.fib(20)/return 6765/' benchmarks/bench_core.py",
  '# the base side and the measuring tool: the build script, perfmine-bench, the harness, the image site-packages',
  'for f in /perfmine/docker_build.sh /usr/local/bin/perfmine-bench /perfmine/bench/perfmine_harness.py; do',
  '  echo "exit 0" >> "$f" 2>/dev/null && echo "WROTE $f"',
  'done',
  'echo "import os" > "$(python3 -c "import sysconfig; print(sysconfig.get_paths()[\'purelib\'])")/zz-perfmine.pth" 2>/dev/null && echo "WROTE a .pth"',
  'mkdir /tests 2>/dev/null && echo "MADE /tests"',
  "# /repo's own git: a command a verifier running git there would run",
  "git config core.fsmonitor 'touch /tmp/fsmonitor-ran-as-$(id -u); false'",
  '# the package, when the verifier imports it: a lying timer, and a process that writes a reward',
  "cat >> fastmath/__init__.py <<'PY'",
  '',
  'import os as _os, subprocess as _subprocess, timeit as _timeit',
  '_orig_timeit = _timeit.Timer.timeit',
  '_timeit.Timer.timeit = lambda self, number=1000000: _orig_timeit(self, number) * 1e-3',
  'if _os.getuid() != 1000 and not _os.environ.get("PERFMINE_SHORTCUT"):',
  '    _os.environ["PERFMINE_SHORTCUT"] = "1"',
  `    _subprocess.Popen(["bash", "-c", ${JSON.stringify(REWARD_WRITER)}], start_new_session=True,`,
  '                      stdout=_subprocess.DEVNULL, stderr=_subprocess.DEVNULL)',
  'PY',
  '# a process left behind that writes a reward',
  `nohup bash -c ${JSON.stringify(REWARD_WRITER).replace(/\$/g, '\\$')} >/dev/null 2>&1 &`,
  'rm -f /tmp/fsmonitor-ran-as-*',
  'true',
].join('\n');

let oracle: Trial;
let empty: Trial;
let broken: Trial;
let shortcuts: Trial;

beforeAll(async () => {
  const sample = createSampleRepo(join(dir, 'fastmath'), '2025-04');
  const db: Db = openStore(dbPath);
  try {
    const ctx = createContext({ config, credentials: readCredentials({}), db, log, metrics: new Metrics(), services: { docker } });
    const result = await runPipeline(ctx, {
      window: monthWindow('2025-04'),
      repos: [REPO],
      prs: [101],
      source: { kind: 'git', path: sample.path },
    });
    if (result.reports.some((r) => Object.keys(r.failed).length > 0)) console.log(lines.join(''));
  } finally {
    db.close();
  }
  // no replay here: the gate off (emit.publish.minReplays 0)
  const configFile = join(dir, 'perfmine.config.json');
  writeFileSync(configFile, JSON.stringify({ emit: { publish: { minReplays: 0 } }, docker: { cpus: 2, memoryMb: 2048 } }));
  const published = await runPublish({ to: harbor, format: 'harbor' }, { db: dbPath, out, config: configFile, json: true });
  expect(published.months).toEqual([{ month: '2025-04', tasks: 1 }]);
  await buildTaskFolder(join(task, 'environment'), image, null);
  oracle = await trial('oracle', 'oracle');
  empty = await trial('empty', EMPTY);
  broken = await trial('broken', BROKEN);
  shortcuts = await trial('shortcuts', SHORTCUTS);
}, 3_600_000);

afterAll(async () => {
  await sh(['rmi', '-f', image]);
  await docker.removeLabelled(label);
  rmSync(dir, { recursive: true, force: true });
}, 300_000);

/** What every trial shares: reward.json and reward.txt agree, nothing of the agent or the code under test runs on, /repo is as it was. */
function expectClean(t: Trial): void {
  expect(t.verifier.code, t.verifier.out).toBe(0);
  expect(t.reward).not.toBeNull();
  expect(t.rewardTxt).toBe(t.reward!['reward']);
  expect(t.after).not.toMatch(/^live /m);
  expect(t.after).toMatch(/^repo 755 agent$/m);
  expect(t.after).not.toMatch(/perfmine-verify-/);
}

describe("a perfmine task in Harbor's trial order (real Docker engine)", () => {
  it("the oracle (the expert patch, applied by solution/solve.sh as the agent): within 5% of 1, the expert's patch measured beside it", () => {
    expect(oracle.agent.code, oracle.agent.out).toBe(0);
    expectClean(oracle);
    expect(oracle.details!.failure).toBeNull();
    expect(oracle.details!.change).toMatchObject({ paths: ['fastmath/core.py'], dropped: [] });
    expect(oracle.reward).toMatchObject({ correct: 1, improved_workloads: 1, expert_measured: 1, hack: 0, verifier_error: 0 });
    expect(Math.abs(oracle.reward!['reward']! - 1)).toBeLessThan(0.05);
    expect(oracle.reward!['speedup']!).toBeGreaterThan(50);
    const fib = oracle.details!.workloads!.find((w) => w.name === 'bench_core.time_fib')!;
    expect(fib).toMatchObject({ verdict: 'improved', memo: { memoised: false } });
    // the outside count can disagree with a workload of a microsecond (fib after the patch) at 4
    // rounds on a loaded machine: its times are then the outside count's, and the honest change
    // keeps its speedup
    if (fib.outside?.consistent === false) expect(fib.speedup).toBeGreaterThan(50);
  });

  it('an empty change: the floor', () => {
    expectClean(empty);
    expect(empty.reward).toMatchObject({ reward: 0, correct: 1, speedup: 1, improved_workloads: 0 });
    expect(empty.details!.change).toMatchObject({ paths: [], dropped: [] });
  });

  it('a change that breaks a test, with the test edited to pass: the failure reward, the edit to the test not taken', () => {
    expect(broken.agent.code, broken.agent.out).toBe(0);
    expectClean(broken);
    expect(broken.reward).toMatchObject({ reward: -1, correct: 0, verifier_error: 0 });
    expect(broken.details!.failure).toMatchObject({ check: 'tests' });
    expect(broken.details!.failure!.message).toContain('test_fib');
    expect(broken.details!.change).toMatchObject({ paths: ['fastmath/core.py'], dropped: ['tests/test_core.py'] });
  });

  it("an agent's shortcuts (the benchmark, the base side's files, /repo's git, a lying timer, reward writers): the failure reward, the hacks named", () => {
    expectClean(shortcuts);
    // nothing outside /repo was writable by the agent
    expect(shortcuts.agent.out).not.toMatch(/WROTE|MADE/);
    // the verifier ran no git command of /repo's configuration
    expect(shortcuts.after).not.toMatch(/fsmonitor-ran-as/);
    expect(shortcuts.details!.change).toMatchObject({ paths: ['fastmath/__init__.py'], dropped: ['benchmarks/bench_core.py'] });
    // the reward files are the verifier's, not the writers' 100: the patched timer and the detached writer are hacks
    expect(shortcuts.reward).toMatchObject({ reward: -1, correct: 0, verifier_error: 0 });
    expect(shortcuts.details!.failure).toMatchObject({ check: 'hack' });
    const rules = new Set(shortcuts.details!.findings!.filter((f) => f.severity === 'hack').map((f) => f.rule));
    expect([...rules].sort()).toEqual(expect.arrayContaining(['clock', 'process']));
    expect(shortcuts.details!.findings!.some((f) => f.rule === 'edits-dropped' && f.path === 'benchmarks/bench_core.py')).toBe(true);
  });
});
