import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildScripts, type Attempt } from '../../cache/build-scripts.js';
import { Ledger } from '../../cache/ledger.js';
import { openStore, type Db } from '../../cache/store.js';
import { runStage, type StageReport } from '../../pipeline/runner.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { createSynthesizeStage } from '../../stages/synthesize/index.js';
import { ScriptedLlm, type ScriptedRule } from '../fakes/scripted-llm.js';
import { buildPythonRepo, type PythonRepo } from '../fixtures/python-repo.js';
import { FakeBuildPort, type FakeOutcome } from './fake-build-port.js';
import {
  gitScope,
  memoryLogger,
  seedCandidates,
  seedVerifiedScript,
  SEEDED,
  tempDir,
  testConfig,
  testContext,
  testLabel,
} from './harness.js';

/**
 * The synthesize stage's strategy through a fake build port: no Docker, real SQLite, a real git
 * clone for the commit's facts, the scripted LLM for the agent. Which scripts are built, in which
 * order, what is recorded, and which attempt images are kept or released.
 */

const REPO = 'fake/port';
const docker = new DockerService({ runLabel: testLabel('fake-port') });
const dir = tempDir('fake-port');
const script = (body: string) => `#!/usr/bin/env bash\nset -euo pipefail\ncd /repo\n${body}\n`;
const WORKS = script('# works\npython3 -m pip install --no-build-isolation --no-deps -e .');
const MISSING_CYTHON: FakeOutcome = { step: 'build', stderr: "ModuleNotFoundError: No module named 'cython'" };
/** Scripts containing "# works" verify; every other script fails its build on a missing module. */
const worksOnly = (s: string): FakeOutcome => (s.includes('# works') ? 'verified' : MISSING_CYTHON);

let fixture: PythonRepo;
let run = 0;

beforeAll(() => {
  // Four commits a day apart; the candidate's base commit is the second.
  fixture = buildPythonRepo({ dir: join(dir, 'repo'), eras: [{ era: 'setup-py', commits: 4 }] });
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Outcome {
  readonly report: StageReport;
  readonly attempts: Attempt[];
  readonly port: FakeBuildPort;
  readonly db: Db;
  readonly detail: string | null;
  readonly output: Record<string, unknown> | null;
}

async function synthesize(options: {
  outcome: (script: string) => FakeOutcome;
  seed?: (db: Db) => void;
  llm?: ScriptedLlm;
  agent?: Record<string, unknown>;
}): Promise<Outcome> {
  run += 1;
  const db = openStore(join(dir, `perfmine-${run}.db`));
  seedCandidates(db, REPO, fixture.commits, [1]);
  options.seed?.(db);
  const config = testConfig(join(dir, `perfmine-${run}.db`), {
    llm: options.llm ? { mode: 'openai', model: 'scripted-primary', fallbackModel: 'scripted-fallback' } : { mode: 'none' },
    synthesize: { offline: true, buildNetwork: 'none', agent: { roundsPerModel: 2, tokenBudget: 100_000, ...options.agent } },
  });
  const port = new FakeBuildPort(options.outcome);
  const stage = createSynthesizeStage(() => port);
  const report = await runStage(
    testContext({ db, config, docker, log: memoryLogger().log, ...(options.llm ? { llm: options.llm } : {}) }),
    stage,
    gitScope(fixture.path),
  );
  const sha = fixture.commits[1]!.sha;
  const attempts = new BuildScripts(db).forCommit(REPO, sha).filter((a) => a.sourceDetail !== SEEDED);
  const row = new Ledger(db).get('synthesize', `${REPO}@${sha}`);
  return { report, attempts, port, db, detail: row?.detail ?? null, output: (row?.output as Record<string, unknown> | null) ?? null };
}

const summary = (attempts: readonly Attempt[]) => attempts.map((a) => `${a.source}:${a.outcome}`);
const seedAt = (db: Db, index: number, s: string) =>
  seedVerifiedScript(db, REPO, fixture.commits[index]!.sha, fixture.commits[index]!.date, s);

describe('synthesize through a fake build port (no Docker)', () => {
  it('reuses the commit’s cached script: one attempt, verified and kept, nothing else built', async () => {
    const { report, attempts, port, output } = await synthesize({ outcome: worksOnly, seed: (db) => seedAt(db, 1, WORKS) });
    expect(report).toMatchObject({ planned: 1, ran: 1, done: 1 });
    expect(port.preflights).toBe(1);
    expect(summary(attempts)).toEqual(['cache:verified']);
    expect(attempts[0]!.sourceDetail).toMatch(/^attempt \d+$/);
    expect(port.built).toEqual([WORKS]);
    expect(output).toMatchObject({
      scriptSource: 'cache',
      script: WORKS,
      imageTag: `fake/env-${fixture.commits[1]!.sha.slice(0, 12)}`,
      attemptId: attempts[0]!.id,
    });
    expect(port.kept).toEqual([output!.imageTag]);
    expect(port.alive.size).toBe(0);
  });

  it('tries the neighbours nearest in commit date first (a tie: the older commit first), and stops at the one that verifies', async () => {
    const older = script('echo older');
    const later = script('echo later');
    const farther = script('# works\necho farther');
    const { attempts, port, output } = await synthesize({
      outcome: worksOnly,
      seed: (db) => {
        seedAt(db, 3, farther);
        seedAt(db, 2, later);
        seedAt(db, 0, older);
      },
    });
    expect(port.built).toEqual([older, later, farther]);
    expect(attempts.map((a) => `${a.source}:${a.outcome}:${a.sourceDetail}`)).toEqual([
      `neighbour:failed:${fixture.commits[0]!.sha.slice(0, 12)} (1.0 days away)`,
      `neighbour:failed:${fixture.commits[2]!.sha.slice(0, 12)} (1.0 days away)`,
      `neighbour:verified:${fixture.commits[3]!.sha.slice(0, 12)} (2.0 days away)`,
    ]);
    expect(output).toMatchObject({ scriptSource: 'neighbour', script: farther });
  });

  it('falls back to the template when there is nothing to reuse', async () => {
    const { attempts, port, output } = await synthesize({ outcome: (s) => (s.includes('--no-deps -e .') ? 'verified' : MISSING_CYTHON) });
    expect(summary(attempts)).toEqual(['template:verified']);
    expect(attempts[0]!.sourceDetail).toBe('editable-offline');
    expect(port.built).toHaveLength(1);
    expect(output).toMatchObject({ scriptSource: 'template' });
  });

  it('then asks the agent, shown each failure, until its script verifies; tokens and model recorded per attempt', async () => {
    const rules: ScriptedRule[] = [
      {
        name: 'second',
        when: (r) => (r.inputs.last_script ?? '').includes('first try'),
        answer: () => ({ reasoning: 'cython first', script: script('# works\npip install cython') }),
      },
      { name: 'first', when: () => true, answer: () => ({ reasoning: 'try', script: script('echo first try') }) },
    ];
    const llm = new ScriptedLlm(rules);
    const { attempts, output } = await synthesize({ outcome: worksOnly, llm, seed: (db) => seedAt(db, 0, script('echo neighbour')) });
    expect(attempts.map((a) => `${a.source}:${a.outcome}:${a.sourceDetail}`)).toEqual([
      'neighbour:failed:' + `${fixture.commits[0]!.sha.slice(0, 12)} (1.0 days away)`,
      'template:failed:editable-offline',
      'agent:failed:scripted-primary round 1',
      'agent:verified:scripted-primary round 2',
    ]);
    expect(llm.calls.map((c) => c.rule)).toEqual(['first', 'second']);
    // The failure history the agent is shown, in order, with the last attempt's logs.
    expect(llm.calls[0]!.inputs.attempt_history).toBe(
      '1. neighbour (' +
        `${fixture.commits[0]!.sha.slice(0, 12)} (1.0 days away)` +
        "): build/missing-module: ModuleNotFoundError: No module named 'cython'\n2. template (editable-offline): build/missing-module: ModuleNotFoundError: No module named 'cython'",
    );
    expect(llm.calls[1]!.inputs.attempt_history!.split('\n')).toHaveLength(3);
    expect(llm.calls[1]!.inputs).toMatchObject({
      failure_stage: 'build',
      stderr_tail: "ModuleNotFoundError: No module named 'cython'",
      stdout_tail: 'build output',
    });
    expect(attempts.filter((a) => a.source === 'agent').map((a) => [a.llmCalls, a.model, a.promptTokens > 0])).toEqual([
      [1, 'scripted-primary', true],
      [1, 'scripted-primary', true],
    ]);
    expect(output).toMatchObject({ scriptSource: 'agent' });
  });

  it('records the failure history of every attempt and drops the commit when nothing verifies (no agent); attempt images are released', async () => {
    const importFails = script('echo builds but does not import');
    const { report, attempts, port, detail } = await synthesize({
      outcome: (s) =>
        s === importFails ? { step: 'import', stderr: "ImportError: cannot import name '_tables' from 'fixpkg'" } : MISSING_CYTHON,
      seed: (db) => seedAt(db, 1, importFails),
    });
    expect(report).toMatchObject({ done: 0, dropped: { 'no-verified-script': 1 } });
    expect(attempts.map((a) => [a.source, a.outcome, a.failingStep, a.failureKind])).toEqual([
      ['cache', 'failed', 'import', 'import-error'],
      ['template', 'failed', 'build', 'missing-module'],
    ]);
    expect(attempts[0]!.stderrTail).toContain("cannot import name '_tables'");
    expect(attempts.every((a) => a.imageTag === null)).toBe(true);
    expect(detail).toBe(
      "2 attempt(s); last failure: build/missing-module: ModuleNotFoundError: No module named 'cython'; no LLM (--llm none or no adapter)",
    );
    // The import failure's image was kept for try_import until the next attempt, then released.
    expect(port.released).toEqual([`fake/env-${fixture.commits[1]!.sha.slice(0, 12)}-attempt-1`]);
    expect(port.alive.size).toBe(0);
    expect(port.kept).toEqual([]);
  });

  it('ends the agent when its rounds are spent: primary then fallback, one round each', async () => {
    const llm = new ScriptedLlm([
      {
        name: 'clueless',
        when: () => true,
        answer: (r) => ({ reasoning: '?', script: script(`echo no idea ${r.model} ${r.inputs.attempt_history!.split('\n').length}`) }),
      },
    ]);
    const { attempts, detail } = await synthesize({ outcome: worksOnly, llm, agent: { roundsPerModel: 1 } });
    expect(attempts.map((a) => `${a.source}:${a.sourceDetail}`)).toEqual([
      'template:editable-offline',
      'agent:scripted-primary round 1',
      'agent:scripted-fallback round 1',
    ]);
    expect(llm.calls.map((c) => c.model)).toEqual(['scripted-primary', 'scripted-fallback']);
    expect(detail).toMatch(/; no verified script after 2 agent round\(s\)$/);
  });

  it('ends the agent when its token budget is spent', async () => {
    const llm = new ScriptedLlm([{ name: 'any', when: () => true, answer: () => ({ reasoning: 'x', script: script('echo x') }) }]);
    const { attempts, detail } = await synthesize({ outcome: worksOnly, llm, agent: { tokenBudget: 50 } });
    expect(summary(attempts)).toEqual(['template:failed']);
    expect(llm.calls).toEqual([]);
    expect(detail).toMatch(/; agent stopped: token-budget-exceeded$/);
  });

  it('records an agent answer that repeats a tried script without building it again', async () => {
    const llm = new ScriptedLlm([
      { name: 'repeat', when: () => true, answer: (r) => ({ reasoning: 'the last script again', script: r.inputs.last_script }) },
    ]);
    const { attempts, port } = await synthesize({ outcome: worksOnly, llm, agent: { roundsPerModel: 1, fallback: false } });
    expect(attempts.map((a) => [a.source, a.failingStep, a.failure])).toEqual([
      ['template', 'build', "build/missing-module: ModuleNotFoundError: No module named 'cython'"],
      ['agent', 'script', 'script/invalid-script: the same script was already tried for this commit, and failed'],
    ]);
    expect(attempts[1]!.script).toBe(attempts[0]!.script);
    expect(port.built).toEqual([attempts[0]!.script]);
  });
});
