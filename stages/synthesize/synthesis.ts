import type { Attempt, BuildScripts, ScriptSource } from '../../cache/build-scripts.js';
import { PerfmineError } from '../../pipeline/errors.js';
import type { Logger } from '../../pipeline/logging.js';
import type { Metrics } from '../../pipeline/metrics.js';
import type { AgentTool, LlmService, LlmUsage, TokenBudget } from '../../pipeline/services/llm-port.js';
import { agentInputs, buildAgentAnswerSchema } from './agent-inputs.js';
import type { BuildPort, CommitTarget } from './build-port.js';
import type { SynthesizeConfig } from './config.js';
import { attemptRecordOf, formatCloneSource, type AttemptRun } from '../../pipeline/services/environments/environment.js';
import { classifyFailure, describeFailure, type StepResult } from '../../pipeline/services/environments/failure.js';
import { orderNeighbours } from './neighbours.js';
import { scriptHash } from '../../pipeline/services/environments/script-check.js';
import { agentView, alreadyTried, nextStep, type AttemptMade, type StrategyInputs, type StrategyState } from './strategy.js';
import { chooseTemplate } from './templates.js';
import { resolveCutoff } from '../../pipeline/services/package-index/cutoff.js';
import type { EnvironmentLock } from '../../pipeline/concepts/records/environment-lock.js';

export type { CommitTarget } from './build-port.js';

export interface SynthesisDeps {
  readonly port: BuildPort;
  readonly store: BuildScripts;
  /** Null: no agent (`--llm none`, or no LLM adapter). */
  readonly llm: LlmService | null;
  /** The fallback model's rounds run only when there is one. */
  readonly hasFallback: boolean;
  readonly config: SynthesizeConfig;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly runId: number | null;
  readonly signal: AbortSignal;
}

export type SynthesisResult =
  | { readonly status: 'verified'; readonly attempt: Attempt; readonly attempts: number }
  | { readonly status: 'failed'; readonly attempts: number; readonly lastFailure: string | null; readonly agentStopped: string | null };

interface Candidate {
  readonly source: ScriptSource;
  readonly detail: string | null;
  readonly script: string;
}

/** An agent answer identical to a script already tried for the commit is not built again. */
function repeatedRun(): AttemptRun {
  const detail = 'the same script was already tried for this commit, and failed';
  const steps: StepResult[] = [
    { step: 'script', ok: false, exitCode: null, timedOut: false, stdout: '', stderr: detail, durationMs: 0, detail },
  ];
  return { steps, failure: classifyFailure(steps), image: null, durationMs: 0, lock: null, scan: null };
}

const NO_USAGE: LlmUsage = { promptTokens: 0, completionTokens: 0, costUsd: 0, requests: 0, cacheHits: 0 };

/** What the strategy starts from: the store's scripts for the commit and its repository, the template, the agent's plan. */
export function strategyInputs(
  target: CommitTarget,
  deps: Pick<SynthesisDeps, 'store' | 'llm' | 'hasFallback' | 'config'>,
): StrategyInputs {
  const { config, store } = deps;
  const cached = config.reuse ? store.latestVerified(target.repo, target.sha) : undefined;
  return {
    cached: cached ? { attemptId: cached.id, script: cached.script } : null,
    neighbours: config.reuse ? orderNeighbours(target, store.verifiedScripts(target.repo), config.neighbours) : [],
    template: chooseTemplate(target.facts, { offline: config.offline }),
    agent: deps.llm
      ? {
          phases: config.agent.fallback && deps.hasFallback ? ['primary', 'fallback'] : ['primary'],
          roundsPerModel: config.agent.roundsPerModel,
          tokenBudget: config.agent.tokenBudget,
        }
      : { unavailable: 'no LLM (--llm none or no adapter)' },
  };
}

/** The time machine as the agent is told of it (buildNetwork `index`). */
function indexView(config: SynthesizeConfig, commitDate: string): { cutoff: string | null; upstream: string } | null {
  if (config.buildNetwork !== 'index') return null;
  const cutoff = resolveCutoff(config.index.cutoff, config.index.slackDays, commitDate);
  return { cutoff: cutoff?.toISOString() ?? null, upstream: config.index.upstream };
}

/** The lock of the nearest neighbour whose verified attempt recorded one. */
function nearestLock(inputs: StrategyInputs, store: BuildScripts): { sha: string; commitDate: string; lock: EnvironmentLock } | null {
  for (const n of inputs.neighbours) {
    const lock = store.get(n.attemptId)?.lock;
    if (lock) return { sha: n.sha, commitDate: n.commitDate, lock };
  }
  return null;
}

/**
 * Finds a verified build script for one commit: the strategy (strategy.ts) says which script to
 * try next; each is built and verified through the build port, or asked of the LLM agent (shown
 * each failure: reflexion) and then built. Every attempt is stored.
 */
export async function synthesizeCommit(target: CommitTarget, deps: SynthesisDeps): Promise<SynthesisResult> {
  const { store, port, log } = deps;
  const inputs = strategyInputs(target, deps);
  const neighbourLock = nearestLock(inputs, store);
  const attempts: AttemptMade[] = [];
  const budget: TokenBudget = { limit: deps.config.agent.tokenBudget, used: 0 };
  let agentStopped: string | null = null;
  let verifiedAttempt: Attempt | null = null;
  let lastImage: string | null = null;
  let tools: AgentTool[] | null = null;
  const state = (): StrategyState => ({ attempts, tokensUsed: budget.used, agentStopped });

  const dropLastImage = async () => {
    if (lastImage) await port.release(lastImage);
    lastImage = null;
  };

  const attempt = async (candidate: Candidate, llm?: { usage: LlmUsage; model: string }): Promise<void> => {
    const hash = scriptHash(candidate.script);
    const run = alreadyTried(state(), hash) ? repeatedRun() : await port.buildAndVerify(target, candidate.script, deps.signal);
    const verified = run.failure === null && run.image !== null;
    let finalTag: string | null = null;
    if (verified && run.image) {
      finalTag = await port.keep(target, run.image);
      await dropLastImage();
    } else if (run.image) {
      // Kept for the agent's try_import until the next attempt builds.
      await dropLastImage();
      lastImage = run.image;
    }
    const failing: StepResult | undefined = run.steps.find((s) => !s.ok) ?? run.steps.find((s) => s.step === 'build');
    const usage = llm?.usage ?? NO_USAGE;
    const id = store.record({
      repo: target.repo,
      sha: target.sha,
      commitDate: target.commitDate,
      script: candidate.script,
      scriptHash: hash,
      source: candidate.source,
      sourceDetail: candidate.detail,
      ...attemptRecordOf(run),
      llmCalls: llm ? 1 : 0,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      costUsd: usage.costUsd,
      model: llm?.model ?? null,
      baseImage: target.baseImage,
      toolchainImage: target.toolchainImage,
      repoImage: target.repoImage,
      cloneSource: formatCloneSource(target.clone),
      asvConfigPath: target.asvConfigPath,
      importName: target.facts.importName,
      pythonVersion: target.python.version,
      imageTag: finalTag,
      runId: deps.runId,
    });
    deps.metrics.add('synthesize.attempts');
    log.info(
      {
        attempt: id,
        source: candidate.source,
        sourceDetail: candidate.detail,
        outcome: verified ? 'verified' : 'failed',
        failure: run.failure ? describeFailure(run.failure) : null,
        durationMs: run.durationMs,
      },
      verified ? 'build script verified' : 'build script failed',
    );
    if (verified) {
      deps.metrics.add('synthesize.verified');
      verifiedAttempt = store.get(id)!;
    }
    attempts.push({
      source: candidate.source,
      detail: candidate.detail,
      script: candidate.script,
      scriptHash: hash,
      verified,
      failure: run.failure,
      stdout: failing?.stdout ?? '',
      stderr: failing?.stderr ?? '',
    });
  };

  /** One agent round: the agent's script, built; or why the agent stopped. */
  const askAgent = async (phase: 'primary' | 'fallback', round: number): Promise<void> => {
    const llm = deps.llm!;
    const cfg = deps.config.agent;
    tools ??= port.agentTools(target, () => lastImage);
    const inputs = agentInputs(
      {
        repo: target.repo,
        sha: target.sha,
        pythonVersion: target.python.version,
        offline: deps.config.offline,
        buildNetwork: deps.config.buildNetwork,
        index: indexView(deps.config, target.commitDate),
        neighbourLock,
        facts: target.facts,
        ...agentView(state()),
      },
      deps.config.tailChars,
    );
    let answer;
    try {
      answer = await llm.agent({
        prompt: 'build-agent',
        // the commit's key goes with every request into llm_calls: what its builds cost (pipeline/concepts/task-costs.ts)
        item: `${target.repo}@${target.sha}`,
        inputs,
        schema: buildAgentAnswerSchema,
        schemaName: 'build_script',
        models: phase,
        budget,
        signal: deps.signal,
        tools,
        maxTurns: cfg.maxTurns,
      });
    } catch (error) {
      // An answer that cannot be used, or a spent budget, ends the agent for this commit;
      // an unreachable server fails the item (it runs again next time).
      if (error instanceof PerfmineError && error.kind === 'item') {
        log.warn({ phase, round, reason: error.reason, err: error.message }, 'build agent stopped');
        agentStopped = `agent stopped: ${error.reason}`;
        return;
      }
      throw error;
    }
    deps.metrics.add('synthesize.agentCalls');
    await attempt(
      { source: 'agent', detail: `${answer.model} round ${round}`, script: answer.value.script },
      { usage: answer.usage, model: answer.model },
    );
  };

  try {
    for (;;) {
      const step = nextStep(inputs, state());
      switch (step.kind) {
        case 'verified':
          return { status: 'verified', attempt: verifiedAttempt!, attempts: attempts.length };
        case 'failed':
          return { status: 'failed', attempts: attempts.length, lastFailure: step.lastFailure, agentStopped: step.agentStopped };
        case 'build':
          await attempt({ source: step.script.source, detail: step.script.detail, script: step.script.script });
          break;
        case 'ask-agent':
          await askAgent(step.phase, step.round);
          break;
      }
    }
  } finally {
    await dropLastImage().catch(() => undefined);
  }
}
