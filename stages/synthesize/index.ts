import { z } from 'zod';
import { BuildScripts } from '../../cache/build-scripts.js';
import { ConfigError } from '../../pipeline/errors.js';
import type { Scope } from '../../pipeline/scope.js';
import type { LlmService } from '../../pipeline/services/llm-port.js';
import { defineStage, type ItemContext, type PipelineContext, type WorkItem } from '../../pipeline/stage.js';
import { loadPullRequest } from '../../cache/pull-requests.js';
import { classifyOutputSchema } from '../../pipeline/concepts/records/classify-output.js';
import { previousOutputs } from '../../pipeline/previous-outputs.js';
import type { BuildPort } from './build-port.js';
import { DockerBuildPort } from './docker-build-port.js';
import { cloneSourceOf, formatCloneSource } from '../../pipeline/services/environments/environment.js';
import type { SynthesizeOutput } from '../../pipeline/concepts/records/synthesize-output.js';
import { commitKey } from '../../pipeline/concepts/keys.js';
import { groupCandidates } from './plan.js';
import { synthesizeCommit } from './synthesis.js';
import { synthesizeResultSettings } from './result-settings.js';
import { stageRemote } from '../../pipeline/executor/stage-remote.js';
import { publishImage } from '../../pipeline/services/environments/image-registry.js';
import { ensurePackageTier } from '../../pipeline/services/environments/package-tier.js';
import { containerLimits } from '../../pipeline/services/docker.js';
import { repositoryEnvironment } from '../../pipeline/config/repository-environment.js';

/**
 * What a commit's environment depends on (its hash decides whether a done item runs again): the
 * commit, where it is cloned from, its asv config, and the settings of result-settings.ts.
 */
export const synthesizeInputSchema = z.object({
  repo: z.string(),
  sha: z.string(),
  /** `git:PATH` or a clone URL. */
  cloneSource: z.string(),
  /** From the collected pull request (null: found in the tree). */
  asvConfigPath: z.string().nullable(),
  /** The repository's base image (`repositories."owner/name".baseImage`, else `docker.baseImage`). */
  baseImage: z.string(),
  /** Debian packages its builds add to the base image, in a tier of their own; absent when none. */
  debianPackages: z.array(z.string()).optional(),
  wheelhouse: z.string().nullable(),
  /** How verification discovers the benchmarks (the harness, or asv). */
  discovery: z.enum(['harness', 'check', 'just-discover']),
  offline: z.boolean(),
  buildNetwork: z.enum(['index', 'bridge', 'none']),
  index: z
    .object({ upstream: z.string(), cutoff: z.string(), slackDays: z.number(), missingUploadTime: z.enum(['exclude', 'include']) })
    .nullable(),
  pythonVersions: z.array(z.string()),
  /** `primary[,fallback]` model names, or null when no agent runs. */
  agent: z.string().nullable(),
  /** Whether cached and neighbouring scripts are tried (synthesize.reuse). */
  reuse: z.boolean(),
  /** The repository is in validate.networkRepos: its suite downloads data when imported, so verification has the network. */
  verifyNetwork: z.boolean(),
  /** The repository's own pytest arguments, which verification's collection takes; absent when none. */
  pytestArgs: z.array(z.string()).optional(),
  /** `prefer` when the repository takes the asv config's pythons as a preference only; absent: `require`. */
  asvPythons: z.literal('prefer').optional(),
});
export type SynthesizeInput = z.infer<typeof synthesizeInputSchema>;

/** The LLM port, or null (with a warning) when this version has no adapter for it. */
function llmOf(ctx: ItemContext): LlmService | null {
  if (ctx.config.llm.mode === 'none') return null;
  try {
    return ctx.services.llm;
  } catch (error) {
    if (error instanceof ConfigError) {
      ctx.log.warn({ reason: error.reason }, 'no LLM adapter: the build agent is skipped');
      return null;
    }
    throw error;
  }
}

/** The build port of a stage run (items get their own, with their logger). */
export type BuildPortFactory = (ctx: PipelineContext) => BuildPort;

const dockerBuildPort: BuildPortFactory = (ctx) => new DockerBuildPort(ctx.services.docker, ctx.config, ctx.log, ctx.db);

/** The synthesize stage, building through `portFactory` (the Docker engine by default; tests pass a fake). */
export function createSynthesizeStage(portFactory: BuildPortFactory = dockerBuildPort) {
  return defineStage<SynthesizeInput, SynthesizeOutput>({
    name: 'synthesize',
    version: 1,
    description:
      "builds and verifies a Docker environment for each candidate's base commit (cached, neighbouring, template or agent-written build script)",
    system: 'docker',

    async preflight(ctx: PipelineContext) {
      // executor slurm: the engine and the base image that matter are the nodes' (each job meets them)
      if (ctx.config.executor.kind === 'slurm') return;
      await portFactory(ctx).preflight(ctx.signal);
    },

    async plan(ctx: PipelineContext, scope: Scope): Promise<WorkItem<SynthesizeInput>[]> {
      const candidates = previousOutputs(ctx, 'synthesize', 'classify', classifyOutputSchema, scope).map((p) => p.output);
      const settings = synthesizeResultSettings(ctx.config);
      return groupCandidates(candidates).map((g) => {
        const asvConfigPath =
          g.prs.map((n) => loadPullRequest(ctx.db, g.repo, n)?.asvConfig?.path).find((p): p is string => typeof p === 'string') ?? null;
        const env = repositoryEnvironment(ctx.config, g.repo);
        const input: SynthesizeInput = {
          repo: g.repo,
          sha: g.sha,
          cloneSource: formatCloneSource(cloneSourceOf(scope.source, g.repo)),
          asvConfigPath,
          ...settings,
          verifyNetwork: ctx.config.validate.networkRepos.includes(g.repo),
          baseImage: env.baseImage,
          ...(env.pythonVersions ? { pythonVersions: [...env.pythonVersions] } : {}),
          // absent unless listed, so that the inputs (and hashes) of other repositories stay as they were
          ...(env.debianPackages.length > 0 ? { debianPackages: [...env.debianPackages] } : {}),
          ...(env.pytestArgs.length > 0 ? { pytestArgs: [...env.pytestArgs] } : {}),
          ...(env.asvPythons === 'prefer' ? { asvPythons: 'prefer' as const } : {}),
        };
        return { key: commitKey(g.repo, g.sha), input, repo: g.repo, at: g.at };
      });
    },

    async run(ctx: ItemContext, item: WorkItem<SynthesizeInput>) {
      const input = synthesizeInputSchema.parse(item.input);
      const port = portFactory(ctx);
      // The repository's own base image, with its Debian packages in a tier of their own.
      const own = repositoryEnvironment(ctx.config, input.repo).setting;
      const tier =
        own === null
          ? null
          : await ensurePackageTier(
              ctx.services.docker,
              input.repo,
              input.baseImage,
              input.debianPackages ?? [],
              {
                setting: own,
                timeoutMs: ctx.config.synthesize.timeouts.repoImage * 1000,
                limits: containerLimits(ctx.config.docker),
                tailChars: ctx.config.synthesize.tailChars,
              },
              ctx.signal,
            );
      const baseImage = tier?.image ?? input.baseImage;
      const prepared = await port.prepareTarget({ ...input, baseImage }, ctx.signal);
      if (prepared.kind === 'no-asv-config')
        return { status: 'dropped', reason: 'no-asv-config', detail: `no asv.conf.json in ${input.repo} at ${input.sha}` };
      if (prepared.kind === 'python-unavailable') return { status: 'dropped', reason: 'python-unavailable', detail: prepared.reason };
      const { target } = prepared;
      const { python } = target;

      const result = await synthesizeCommit(target, {
        port,
        store: new BuildScripts(ctx.db),
        llm: input.agent === null ? null : llmOf(ctx),
        hasFallback: Boolean(ctx.config.llm.fallbackModel),
        config: ctx.config.synthesize,
        log: ctx.log,
        metrics: ctx.metrics,
        runId: ctx.runId,
        signal: ctx.signal,
      });
      if (result.status === 'failed') {
        return {
          status: 'dropped',
          reason: 'no-verified-script',
          detail: `${result.attempts} attempt(s); last failure: ${result.lastFailure ?? 'none'}; ${result.agentStopped ?? ''}`.trim(),
        };
      }
      const a = result.attempt;
      // executor slurm: validate may run on another node, which pulls the image rather than building it again
      const registry = ctx.config.executor.registry;
      if (registry !== undefined && ctx.config.executor.kind === 'slurm')
        await publishImage(ctx.services.docker, registry, a.imageTag!, ctx.log);
      const output: SynthesizeOutput = {
        repo: input.repo,
        sha: input.sha,
        commitDate: target.commitDate,
        imageTag: a.imageTag!,
        script: a.script,
        scriptSource: a.source,
        attemptId: a.id,
        pythonVersion: python.version,
        repoImageTag: target.repoImage,
        baseImage,
        ...(input.debianPackages && input.debianPackages.length > 0
          ? {
              packageTier: {
                baseImage: input.baseImage,
                debianPackages: input.debianPackages,
                ...(tier ? { debianLock: [...tier.debianLock] } : {}),
              },
            }
          : {}),
        toolchainImage: target.toolchainImage,
        asvConfigPath: target.asvConfigPath,
        importName: target.facts.importName,
        cloneSource: input.cloneSource,
        lock: a.lock ?? null,
      };
      return {
        status: 'done',
        output,
        detail: `verified a ${a.source} script (${a.sourceDetail ?? ''}) after ${result.attempts} attempt(s); python ${python.version}: ${python.reason}`,
      };
    },

    // executor slurm: the commit is built on a compute node, from the repository's verified scripts
    remote: stageRemote<SynthesizeInput, SynthesizeOutput, unknown>('synthesize', {
      reads: (item) => [{ table: 'build_attempts', where: "repo = ? AND outcome = 'verified'", params: [item.input.repo] }],
      writes: [{ table: 'build_attempts', id: 'id' }, { table: 'llm_cache' }, { table: 'llm_calls', id: 'id' }],
      adopt(outcome, ids) {
        const attemptId = outcome.status === 'done' ? ids.get('build_attempts')?.get(outcome.output.attemptId) : undefined;
        return attemptId === undefined || outcome.status !== 'done' ? outcome : { ...outcome, output: { ...outcome.output, attemptId } };
      },
    }),
  });
}

export const synthesizeStage = createSynthesizeStage();
