import { describe, expect, it } from 'vitest';
import { classifyFailure, type Failure } from '../../pipeline/services/environments/failure.js';
import type { VerifiedScript } from '../../cache/build-scripts.js';
import { orderNeighbours } from '../../stages/synthesize/neighbours.js';
import { scriptHash } from '../../pipeline/services/environments/script-check.js';
import {
  agentView,
  nextStep,
  plannedScripts,
  type AttemptMade,
  type NextStep,
  type StrategyInputs,
  type StrategyState,
} from '../../stages/synthesize/strategy.js';

/** synthesize's strategy as data: no Docker, no store, no LLM. */

const day = (n: number) => new Date(Date.UTC(2024, 0, 1 + n, 12)).toISOString();
const script = (name: string) => `#!/usr/bin/env bash\nset -euo pipefail\necho ${name}\n`;
const verifiedScript = (attemptId: number, sha: string, d: number, s: string): VerifiedScript => ({
  attemptId,
  sha,
  commitDate: day(d),
  script: s,
  scriptHash: scriptHash(s),
});
const TEMPLATE = { name: 'editable-offline', script: script('template') } as const;
const AGENT = { phases: ['primary', 'fallback'], roundsPerModel: 2, tokenBudget: 1000 } as const;

const buildFailure = (stderr: string): Failure =>
  classifyFailure([
    { step: 'script', ok: true, exitCode: 0, timedOut: false, stdout: '', stderr: '', durationMs: 1 },
    { step: 'build', ok: false, exitCode: 1, timedOut: false, stdout: 'building', stderr, durationMs: 1 },
  ])!;
const MISSING = buildFailure("ModuleNotFoundError: No module named 'cython'");

function inputs(over: Partial<StrategyInputs> = {}): StrategyInputs {
  return { cached: null, neighbours: [], template: TEMPLATE, agent: AGENT, ...over };
}

function made(
  step: NextStep,
  verified = false,
  failure: Failure | null = verified ? null : MISSING,
  agentScript = script('agent'),
): AttemptMade {
  if (step.kind === 'build') {
    return {
      source: step.script.source,
      detail: step.script.detail,
      script: step.script.script,
      scriptHash: step.script.scriptHash,
      verified,
      failure,
      stdout: 'building',
      stderr: failure?.headline ?? '',
    };
  }
  if (step.kind === 'ask-agent') {
    return {
      source: 'agent',
      detail: `${step.phase} round ${step.round}`,
      script: agentScript,
      scriptHash: scriptHash(agentScript),
      verified,
      failure,
      stdout: '',
      stderr: '',
    };
  }
  throw new Error(`not an attempt: ${step.kind}`);
}

const state = (attempts: AttemptMade[] = [], over: Partial<StrategyState> = {}): StrategyState => ({
  attempts,
  tokensUsed: 0,
  agentStopped: null,
  ...over,
});

/**
 * Walks the strategy to its end: every attempt fails, except the one named by `verifiesAt` (its
 * position); agent answers are distinct scripts. Returns the steps taken, the final one last.
 */
function walk(start: StrategyInputs, verifiesAt = -1, tokensPerAgentCall = 0): NextStep[] {
  const attempts: AttemptMade[] = [];
  const steps: NextStep[] = [];
  let tokensUsed = 0;
  for (let guard = 0; guard < 100; guard += 1) {
    const step = nextStep(start, state(attempts, { tokensUsed }));
    steps.push(step);
    if (step.kind === 'verified' || step.kind === 'failed') return steps;
    if (step.kind === 'ask-agent') tokensUsed += tokensPerAgentCall;
    attempts.push(made(step, attempts.length === verifiesAt, undefined, script(`agent ${attempts.length}`)));
  }
  throw new Error('the strategy did not end');
}

const label = (s: NextStep) =>
  s.kind === 'build'
    ? `${s.script.source}:${s.script.detail}`
    : s.kind === 'ask-agent'
      ? `agent:${s.phase}:${s.round}`
      : s.kind === 'failed'
        ? `failed:${s.agentStopped}`
        : `verified:${s.attempt}`;

describe('synthesize strategy (pure planner)', () => {
  it('tries the commit’s cached script first, and stops when it verifies', () => {
    const start = inputs({
      cached: { attemptId: 7, script: script('cached') },
      neighbours: orderNeighbours({ sha: 't', commitDate: day(10) }, [verifiedScript(1, 'a', 9, script('a'))]),
    });
    const first = nextStep(start, state());
    expect(first).toMatchObject({ kind: 'build', script: { source: 'cache', detail: 'attempt 7', script: script('cached') } });
    expect(nextStep(start, state([made(first, true)]))).toEqual({ kind: 'verified', attempt: 0 });
  });

  it('then the neighbours nearest in commit date first, then the template, then the agent: primary rounds, fallback rounds', () => {
    const neighbours = orderNeighbours({ sha: 't', commitDate: day(10) }, [
      verifiedScript(1, 'far0000000000', 2, script('far')),
      verifiedScript(2, 'near000000000', 11, script('near')),
      verifiedScript(3, 'mid0000000000', 7, script('mid')),
    ]);
    const steps = walk(inputs({ cached: { attemptId: 9, script: script('cached') }, neighbours }));
    expect(steps.map(label)).toEqual([
      'cache:attempt 9',
      'neighbour:near00000000 (1.0 days away)',
      'neighbour:mid000000000 (3.0 days away)',
      'neighbour:far000000000 (8.0 days away)',
      'template:editable-offline',
      'agent:primary:1',
      'agent:primary:2',
      'agent:fallback:1',
      'agent:fallback:2',
      'failed:no verified script after 4 agent round(s)',
    ]);
  });

  it('stops at the first script that verifies, wherever it comes', () => {
    const neighbours = orderNeighbours({ sha: 't', commitDate: day(10) }, [
      verifiedScript(1, 'a', 9, script('a')),
      verifiedScript(2, 'b', 13, script('b')),
    ]);
    expect(walk(inputs({ neighbours }), 1).map(label)).toEqual([
      'neighbour:a (1.0 days away)',
      'neighbour:b (3.0 days away)',
      'verified:1',
    ]);
    expect(walk(inputs({ neighbours }), 2).map(label).at(-2)).toBe('template:editable-offline');
    expect(walk(inputs({ neighbours }), 4).map(label).slice(-2)).toEqual(['agent:primary:2', 'verified:4']);
  });

  it('never tries a script twice: a neighbour equal to the cached script and a template equal to a neighbour are skipped', () => {
    const neighbours = orderNeighbours({ sha: 't', commitDate: day(10) }, [
      verifiedScript(1, 'same', 9, script('cached')),
      verifiedScript(2, 'tmpl', 12, TEMPLATE.script),
      verifiedScript(3, 'other', 14, script('other')),
    ]);
    const labels = walk(inputs({ cached: { attemptId: 1, script: script('cached') }, neighbours, agent: { unavailable: 'no LLM' } })).map(
      label,
    );
    expect(labels).toEqual(['cache:attempt 1', 'neighbour:tmpl (2.0 days away)', 'neighbour:other (4.0 days away)', 'failed:no LLM']);
  });

  it('without an agent, ends after the template with why, and the last failure described', () => {
    const steps = walk(inputs({ agent: { unavailable: 'no LLM (--llm none or no adapter)' } }));
    expect(steps.map(label)).toEqual(['template:editable-offline', 'failed:no LLM (--llm none or no adapter)']);
    expect(steps.at(-1)).toEqual({
      kind: 'failed',
      lastFailure: "build/missing-module: ModuleNotFoundError: No module named 'cython'",
      agentStopped: 'no LLM (--llm none or no adapter)',
    });
  });

  it('only the primary model’s rounds when there is no fallback phase', () => {
    expect(walk(inputs({ agent: { phases: ['primary'], roundsPerModel: 3, tokenBudget: 10 } })).map(label)).toEqual([
      'template:editable-offline',
      'agent:primary:1',
      'agent:primary:2',
      'agent:primary:3',
      'failed:no verified script after 3 agent round(s)',
    ]);
  });

  it('stops asking the agent once its token budget is spent', () => {
    // 400 tokens a call against a budget of 1000: the third call would start with 1200 used.
    const labels = walk(inputs(), -1, 400).map(label);
    expect(labels).toEqual([
      'template:editable-offline',
      'agent:primary:1',
      'agent:primary:2',
      'agent:fallback:1',
      'failed:token budget of 1000 spent',
    ]);
    expect(nextStep(inputs(), state([made(walk(inputs())[0]!)], { tokensUsed: 1000 }))).toMatchObject({
      kind: 'failed',
      agentStopped: 'token budget of 1000 spent',
    });
  });

  it('ends when the agent stopped (an unusable answer, a budget the LLM port refused)', () => {
    const template = nextStep(inputs(), state());
    expect(nextStep(inputs(), state([made(template)], { agentStopped: 'agent stopped: token-budget-exceeded' }))).toEqual({
      kind: 'failed',
      lastFailure: "build/missing-module: ModuleNotFoundError: No module named 'cython'",
      agentStopped: 'agent stopped: token-budget-exceeded',
    });
  });

  it('counts an agent answer that repeats a tried script as a round (it is recorded, not built)', () => {
    const template = nextStep(inputs(), state());
    const tried = [made(template)];
    const round1 = nextStep(inputs(), state(tried));
    expect(round1).toEqual({ kind: 'ask-agent', phase: 'primary', round: 1 });
    tried.push(made(round1, false, MISSING, TEMPLATE.script));
    expect(nextStep(inputs(), state(tried))).toEqual({ kind: 'ask-agent', phase: 'primary', round: 2 });
  });

  it('shows the agent the last attempt’s script, failure and logs, and every attempt’s failure in order', () => {
    expect(agentView(state())).toEqual({ lastScript: null, lastFailure: null, stdoutTail: '', stderrTail: '', history: [] });
    const first = nextStep(inputs({ cached: { attemptId: 3, script: script('cached') } }), state());
    const timedOut = classifyFailure([{ step: 'build', ok: false, exitCode: null, timedOut: true, stdout: '', stderr: '', durationMs: 1 }]);
    const attempts = [made(first), made(nextStep(inputs(), state()), false, timedOut)];
    const view = agentView(state(attempts));
    expect(view).toMatchObject({ lastScript: TEMPLATE.script, lastFailure: timedOut, stdoutTail: 'building' });
    expect(view.history).toEqual([
      { source: 'cache', detail: 'attempt 3', failure: MISSING },
      { source: 'template', detail: 'editable-offline', failure: timedOut },
    ]);
  });

  it('plans the known scripts with the hash every attempt is recorded under', () => {
    const n = orderNeighbours({ sha: 't', commitDate: day(10) }, [verifiedScript(1, 'a', 9, script('a'))]);
    // A stored hash that no longer matches its script (an older normalization) must not make the planner loop.
    const stale = [{ ...n[0]!, scriptHash: 'stale' }];
    const planned = plannedScripts(inputs({ neighbours: stale }));
    expect(planned.map((p) => p.scriptHash)).toEqual([scriptHash(script('a')), scriptHash(TEMPLATE.script)]);
    expect(walk(inputs({ neighbours: stale, agent: { unavailable: 'none' } })).map(label)).toEqual([
      'neighbour:a (1.0 days away)',
      'template:editable-offline',
      'failed:none',
    ]);
  });
});
