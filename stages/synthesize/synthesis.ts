import type { Attempt, BuildScripts, ScriptSource } from '../../cache/build-scripts.js';
import { PerfmineError } from '../../pipeline/errors.js';
import type { Logger } from '../../pipeline/logging.js';
import type { Metrics } from '../../pipeline/metrics.js';
import type { LlmService, LlmUsage, TokenBudget } from '../../pipeline/services/llm-port.js';
import { agentInputs, buildAgentAnswerSchema, type AttemptNote } from './agent-inputs.js';
import { buildAgentTools } from './agent-tools.js';
import type { SynthesizeConfig } from './config.js';
import { attemptRecordOf, formatCloneSource, type AttemptRun, type CloneSource, type Environments } from '../../pipeline/services/environments/environment.js';
import { classifyFailure, describeFailure, type Failure, type StepResult } from '../../pipeline/services/environments/failure.js';
import type { GitTree } from './git-tree.js';
import { attemptImageTag, envImageTag } from '../../pipeline/services/environments/image-names.js';
import { orderNeighbours } from './neighbours.js';
import type { PythonChoice } from './python-version.js';
import type { RepoFacts } from './repo-facts.js';
import { scriptHash } from '../../pipeline/services/environments/script-check.js';
import { chooseTemplate } from './templates.js';

/** Everything known about the commit before any script is tried. */
export interface CommitTarget {
  readonly repo: string;
  readonly sha: string;
  readonly commitDate: string;
  readonly clone: CloneSource;
  readonly baseImage: string;
  readonly toolchainImage: string;
  readonly repoImage: string;
  readonly facts: RepoFacts;
  readonly asvConfigPath: string;
  readonly benchmarkDir: string | null;
  readonly python: PythonChoice;
  readonly tree: GitTree;
}

export interface SynthesisDeps {
  readonly envs: Environments;
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

interface LastAttempt {
  readonly script: string;
  readonly failure: Failure | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** An agent answer identical to a script already tried for the commit is not built again. */
function repeatedRun(): AttemptRun {
  const detail = 'the same script was already tried for this commit, and failed';
  const steps: StepResult[] = [{ step: 'script', ok: false, exitCode: null, timedOut: false, stdout: '', stderr: detail, durationMs: 0, detail }];
  return { steps, failure: classifyFailure(steps), image: null, durationMs: 0 };
}

const NO_USAGE: LlmUsage = { promptTokens: 0, completionTokens: 0, costUsd: 0, requests: 0, cacheHits: 0 };

/**
 * Finds a verified build script for one commit, in order, stopping at the first that verifies:
 * the commit's cached script; the repository's verified scripts nearest in commit date; the
 * default template; then the LLM agent, shown each failure (reflexion), for a number of rounds
 * with the primary model and then the fallback, within a token budget. Every attempt is stored.
 */
export async function synthesizeCommit(target: CommitTarget, deps: SynthesisDeps): Promise<SynthesisResult> {
  const { store, envs, log } = deps;
  const tried = new Set<string>();
  const notes: AttemptNote[] = [];
  let attempts = 0;
  let last: LastAttempt | null = null;
  let lastImage: string | null = null;
  let sequence = 0;

  const dropLastImage = async () => {
    if (lastImage) await envs.discard(lastImage);
    lastImage = null;
  };

  const attempt = async (candidate: Candidate, llm?: { usage: LlmUsage; model: string }): Promise<Attempt | null> => {
    attempts += 1;
    sequence += 1;
    const hash = scriptHash(candidate.script);
    const repeated = tried.has(hash);
    tried.add(hash);
    const tag = attemptImageTag(target.repo, target.sha, `${Date.now()}${sequence}`);
    let run: AttemptRun;
    try {
      run = repeated ? repeatedRun() : await envs.buildAndVerify(
        {
          repo: target.repo,
          sha: target.sha,
          script: candidate.script,
          repoImage: target.repoImage,
          importName: target.facts.importName,
          asvConfigPath: target.asvConfigPath,
          pythonVersion: target.python.version,
          layout: { benchmarkDir: target.benchmarkDir, testDirs: target.facts.testDirs },
        },
        tag,
        deps.signal,
      );
    } catch (error) {
      await envs.discard(tag).catch(() => undefined);
      throw error;
    }
    const verified = run.failure === null && run.image !== null;
    const finalTag = verified ? envImageTag(target.repo, target.sha) : null;
    if (verified && finalTag) {
      await envs.promote(tag, finalTag);
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
      scriptHash: scriptHash(candidate.script),
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
      { attempt: id, source: candidate.source, sourceDetail: candidate.detail, outcome: verified ? 'verified' : 'failed', failure: run.failure ? describeFailure(run.failure) : null, durationMs: run.durationMs },
      verified ? 'build script verified' : 'build script failed',
    );
    if (verified) {
      deps.metrics.add('synthesize.verified');
      return store.get(id)!;
    }
    last = { script: candidate.script, failure: run.failure, stdout: failing?.stdout ?? '', stderr: failing?.stderr ?? '' };
    notes.push({ source: candidate.source, detail: candidate.detail, failure: run.failure });
    return null;
  };

  try {
    // 1. The cached script of this commit.
    const cached = deps.config.reuse ? store.latestVerified(target.repo, target.sha) : undefined;
    if (cached) {
      const ok = await attempt({ source: 'cache', detail: `attempt ${cached.id}`, script: cached.script });
      if (ok) return { status: 'verified', attempt: ok, attempts };
    }
    // 2. Verified scripts of the repository, nearest in commit date first.
    const neighbours = deps.config.reuse ? orderNeighbours(target, store.verifiedScripts(target.repo), deps.config.neighbours) : [];
    for (const n of neighbours) {
      if (tried.has(n.scriptHash)) continue;
      const days = (n.distanceMs / 86_400_000).toFixed(1);
      const ok = await attempt({ source: 'neighbour', detail: `${n.sha.slice(0, 12)} (${days} days away)`, script: n.script });
      if (ok) return { status: 'verified', attempt: ok, attempts };
    }
    // 3. The default template.
    const template = chooseTemplate(target.facts, { offline: deps.config.offline });
    if (!tried.has(scriptHash(template.script))) {
      const ok = await attempt({ source: 'template', detail: template.name, script: template.script });
      if (ok) return { status: 'verified', attempt: ok, attempts };
    }
    // 4. The agent.
    const stopped = deps.llm ? await agentRounds() : 'no LLM (--llm none or no adapter)';
    if (typeof stopped !== 'string') return { status: 'verified', attempt: stopped, attempts };
    const lastFailure = (last as LastAttempt | null)?.failure;
    return { status: 'failed', attempts, lastFailure: lastFailure ? describeFailure(lastFailure) : null, agentStopped: stopped };
  } finally {
    await dropLastImage().catch(() => undefined);
  }

  /** The reflexion rounds; resolves with the verified attempt, or why the agent stopped. */
  async function agentRounds(): Promise<Attempt | string> {
    const llm = deps.llm!;
    const cfg = deps.config.agent;
    const budget: TokenBudget = { limit: cfg.tokenBudget, used: 0 };
    const tools = buildAgentTools({
      tree: target.tree,
      sha: target.sha,
      docker: envs.docker,
      repoImage: target.repoImage,
      lastImage: () => lastImage,
      pythonVersion: target.python.version,
      limits: envs.settings.limits,
      timeoutMs: envs.settings.timeoutsMs.tool,
    });
    const phases: ('primary' | 'fallback')[] = cfg.fallback && deps.hasFallback ? ['primary', 'fallback'] : ['primary'];
    for (const phase of phases) {
      for (let round = 1; round <= cfg.roundsPerModel; round += 1) {
        if (budget.used >= budget.limit) return `token budget of ${budget.limit} spent`;
        const l = last as LastAttempt | null;
        const inputs = agentInputs(
          {
            repo: target.repo,
            sha: target.sha,
            pythonVersion: target.python.version,
            offline: deps.config.offline,
            buildNetwork: envs.settings.buildNetwork,
            facts: target.facts,
            lastScript: l?.script ?? null,
            lastFailure: l?.failure ?? null,
            stdoutTail: l?.stdout ?? '',
            stderrTail: l?.stderr ?? '',
            history: notes,
          },
          deps.config.tailChars,
        );
        let answer;
        try {
          answer = await llm.agent({
            prompt: 'build-agent',
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
            return `agent stopped: ${error.reason}`;
          }
          throw error;
        }
        deps.metrics.add('synthesize.agentCalls');
        const ok = await attempt({ source: 'agent', detail: `${answer.model} round ${round}`, script: answer.value.script }, { usage: answer.usage, model: answer.model });
        if (ok) return ok;
      }
    }
    return `no verified script after ${phases.length * cfg.roundsPerModel} agent round(s)`;
  }
}
