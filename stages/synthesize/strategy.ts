import type { ScriptSource } from '../../cache/build-scripts.js';
import type { AttemptNote } from './agent-inputs.js';
import { describeFailure, type Failure } from '../../pipeline/services/environments/failure.js';
import type { Neighbour } from './neighbours.js';
import { scriptHash } from '../../pipeline/services/environments/script-check.js';
import type { Template } from './templates.js';

/**
 * synthesize's strategy, as data: which build script to try next for a commit, given what is
 * known before any attempt (its cached script, its neighbours' scripts, the template, whether an
 * agent may write scripts) and the attempts made so far. Pure: the stage's shell (synthesis.ts)
 * asks for the next step, makes it through the build port and the LLM port, records what
 * happened and asks again, until a final outcome.
 *
 * In order, stopping at the first verified script: the commit's cached script; the repository's
 * verified scripts nearest in commit date; the template; then the agent, for a number of rounds
 * with the primary model and then the fallback, within a token budget. A script already tried for
 * the commit (same normalized hash) is not tried again.
 */

/** A script known before any attempt: the cached one, a neighbour's, or the template. */
export interface PlannedScript {
  readonly source: Exclude<ScriptSource, 'agent'>;
  readonly detail: string;
  readonly script: string;
  readonly scriptHash: string;
}

export interface AgentPlan {
  /** The models' phases in order (the fallback only when there is one and it is enabled). */
  readonly phases: readonly ('primary' | 'fallback')[];
  readonly roundsPerModel: number;
  /** Prompt + completion tokens over every agent call of the commit. */
  readonly tokenBudget: number;
}

export interface StrategyInputs {
  /** The commit's latest verified script (null: none, or reuse is off). */
  readonly cached: { readonly attemptId: number; readonly script: string } | null;
  /** Verified scripts of the repository's other commits, nearest in commit date first (orderNeighbours); empty when reuse is off. */
  readonly neighbours: readonly Neighbour[];
  readonly template: Template;
  /** The agent's plan, or why there is no agent. */
  readonly agent: AgentPlan | { readonly unavailable: string };
}

/** One attempt made, as the strategy needs to know it. */
export interface AttemptMade {
  readonly source: ScriptSource;
  readonly detail: string | null;
  readonly script: string;
  readonly scriptHash: string;
  readonly verified: boolean;
  readonly failure: Failure | null;
  /** Logs of the failing step (or the build step), as the agent is shown them. */
  readonly stdout: string;
  readonly stderr: string;
}

export interface StrategyState {
  readonly attempts: readonly AttemptMade[];
  /** Tokens the agent has used for the commit. */
  readonly tokensUsed: number;
  /** Why the agent ended early (an unusable answer, a budget spent during a call); null while it may go on. */
  readonly agentStopped: string | null;
}

export type NextStep =
  | { readonly kind: 'build'; readonly script: PlannedScript }
  | { readonly kind: 'ask-agent'; readonly phase: 'primary' | 'fallback'; readonly round: number }
  | { readonly kind: 'verified'; readonly attempt: number }
  | { readonly kind: 'failed'; readonly lastFailure: string | null; readonly agentStopped: string };

const DAY_MS = 86_400_000;

/**
 * The scripts known before any attempt, in the order they are tried (one already tried is skipped,
 * by hash). Hashes are computed here, as for the attempts made, so that each planned script is
 * seen as tried once it has been.
 */
export function plannedScripts(inputs: StrategyInputs): PlannedScript[] {
  const out: PlannedScript[] = [];
  if (inputs.cached)
    out.push({
      source: 'cache',
      detail: `attempt ${inputs.cached.attemptId}`,
      script: inputs.cached.script,
      scriptHash: scriptHash(inputs.cached.script),
    });
  for (const n of inputs.neighbours) {
    out.push({
      source: 'neighbour',
      detail: `${n.sha.slice(0, 12)} (${(n.distanceMs / DAY_MS).toFixed(1)} days away)`,
      script: n.script,
      scriptHash: scriptHash(n.script),
    });
  }
  out.push({
    source: 'template',
    detail: inputs.template.name,
    script: inputs.template.script,
    scriptHash: scriptHash(inputs.template.script),
  });
  return out;
}

/** Whether a script (by hash) was already tried for the commit. */
export function alreadyTried(state: StrategyState, hash: string): boolean {
  return state.attempts.some((a) => a.scriptHash === hash);
}

/** The next step for the commit. */
export function nextStep(inputs: StrategyInputs, state: StrategyState): NextStep {
  const verified = state.attempts.findIndex((a) => a.verified);
  if (verified >= 0) return { kind: 'verified', attempt: verified };
  const planned = plannedScripts(inputs).find((p) => !alreadyTried(state, p.scriptHash));
  if (planned) return { kind: 'build', script: planned };
  const failed = (agentStopped: string): NextStep => {
    const last = state.attempts.at(-1)?.failure;
    return { kind: 'failed', lastFailure: last ? describeFailure(last) : null, agentStopped };
  };
  const agent = inputs.agent;
  if ('unavailable' in agent) return failed(agent.unavailable);
  if (state.agentStopped !== null) return failed(state.agentStopped);
  const asked = state.attempts.filter((a) => a.source === 'agent').length;
  const rounds = agent.phases.length * agent.roundsPerModel;
  if (asked >= rounds) return failed(`no verified script after ${rounds} agent round(s)`);
  if (state.tokensUsed >= agent.tokenBudget) return failed(`token budget of ${agent.tokenBudget} spent`);
  return { kind: 'ask-agent', phase: agent.phases[Math.floor(asked / agent.roundsPerModel)]!, round: (asked % agent.roundsPerModel) + 1 };
}

/** What the agent is shown of the attempts so far: the last one's script, failure and logs, and every attempt's failure. */
export function agentView(state: StrategyState): {
  readonly lastScript: string | null;
  readonly lastFailure: Failure | null;
  readonly stdoutTail: string;
  readonly stderrTail: string;
  readonly history: readonly AttemptNote[];
} {
  const last = state.attempts.at(-1);
  return {
    lastScript: last?.script ?? null,
    lastFailure: last?.failure ?? null,
    stdoutTail: last?.stdout ?? '',
    stderrTail: last?.stderr ?? '',
    history: state.attempts.map((a) => ({ source: a.source, detail: a.detail, failure: a.failure })),
  };
}
