import { z } from 'zod';
import { BuildScripts } from '../../cache/build-scripts.js';
import { ConfigError, OutsideServiceError } from '../../pipeline/errors.js';
import type { Scope } from '../../pipeline/scope.js';
import type { LlmService } from '../../pipeline/services/llm-port.js';
import { defineStage, type ItemContext, type PipelineContext, type WorkItem } from '../../pipeline/stage.js';
import { loadPullRequest } from '../../cache/pull-requests.js';
import { classifyOutputSchema } from '../../pipeline/concepts/records/classify-output.js';
import { buildSettings, cloneSourceOf, discoveryOf, Environments, formatCloneSource, wheelhouseOf } from '../../pipeline/services/environments/environment.js';
import type { SynthesizeOutput } from '../../pipeline/concepts/records/synthesize-output.js';
import { commitKey } from '../../pipeline/concepts/keys.js';
import { groupCandidates } from './plan.js';
import { synthesizeCommit } from './synthesis.js';
import { synthesizeResultSettings } from './result-settings.js';
import { prepareTarget } from './target.js';

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
  baseImage: z.string(),
  wheelhouse: z.string().nullable(),
  /** How verification discovers the benchmarks (the harness, or asv). */
  discovery: z.enum(['harness', 'check', 'just-discover']),
  offline: z.boolean(),
  buildNetwork: z.enum(['bridge', 'none']),
  pythonVersions: z.array(z.string()),
  /** `primary[,fallback]` model names, or null when no agent runs. */
  agent: z.string().nullable(),
  /** Whether cached and neighbouring scripts are tried (synthesize.reuse). */
  reuse: z.boolean(),
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

export const synthesizeStage = defineStage<SynthesizeInput, SynthesizeOutput>({
  name: 'synthesize',
  version: 1,
  description: "builds and verifies a Docker environment for each candidate's base commit (cached, neighbouring, template or agent-written build script)",
  system: 'docker',

  async preflight(ctx: PipelineContext) {
    const docker = ctx.services.docker;
    try {
      await docker.ping();
    } catch (error) {
      if (error instanceof OutsideServiceError) {
        throw new ConfigError(`docker: ${error.message}`, { reason: 'docker-unreachable', fix: error.fix ?? 'start the Docker engine, or set DOCKER_HOST' });
      }
      throw error;
    }
    const envs = new Environments(docker, buildSettings(ctx.config), ctx.log);
    const toolchain = await envs.ensureToolchain(ctx.config.docker.baseImage, wheelhouseOf(ctx.config), ctx.signal);
    const asvEngine = ctx.config.validate.engine === 'asv';
    // the harness needs only the image's Python; the asv engine needs asv in it
    const probe = await docker.run({
      image: toolchain.image,
      cmd: ['bash', '-c', asvEngine ? 'command -v asv >/dev/null && asv --version' : 'command -v python3 >/dev/null && python3 --version'],
      network: 'none',
      timeoutMs: 60_000,
      limits: envs.settings.limits,
      labels: { 'org.perfmine.role': 'preflight' },
    });
    if (probe.exitCode !== 0 && !asvEngine) {
      throw new ConfigError(`docker.baseImage: ${toolchain.image} has no python3 (${(probe.stderr || probe.stdout).trim().slice(-200) || 'python3: not found'})`, {
        reason: 'no-python-in-image',
        fix: 'use a base image with Python 3.8 or newer (scripts/build-base-image.sh builds perfmine/base:bookworm from Debian packages)',
      });
    }
    if (probe.exitCode !== 0) {
      throw new ConfigError(`docker.baseImage: ${toolchain.image} has no asv (${(probe.stderr || probe.stdout).trim().slice(-200) || 'asv: not found'})`, {
        reason: 'no-asv-in-image',
        fix: 'set validate.engine to perfmine (needs no asv), or build the base image from scripts/base-pypi.Dockerfile (hosts with PyPI), or set synthesize.asv.wheelhouse to a directory of asv wheels',
      });
    }
    const removed = await docker.removeLeftovers();
    if (removed.containers.length + removed.images.length > 0) {
      ctx.log.info({ containers: removed.containers.length, images: removed.images.length }, 'removed leftovers of a crashed run');
    }
  },

  async plan(ctx: PipelineContext, scope: Scope): Promise<WorkItem<SynthesizeInput>[]> {
    const rows = ctx.ledger.list('classify', { window: scope.window, includeTimeless: false, repos: scope.repos, statuses: ['done'] });
    const candidates = rows
      .map((r) => classifyOutputSchema.safeParse(r.output))
      .filter((r) => r.success)
      .map((r) => r.data)
      .filter((c) => scope.prs.length === 0 || scope.prs.includes(c.number));
    const settings = synthesizeResultSettings(ctx.config);
    return groupCandidates(candidates).map((g) => {
      const asvConfigPath = g.prs.map((n) => loadPullRequest(ctx.db, g.repo, n)?.asvConfig?.path).find((p): p is string => typeof p === 'string') ?? null;
      const input: SynthesizeInput = {
        repo: g.repo,
        sha: g.sha,
        cloneSource: formatCloneSource(cloneSourceOf(scope.source, g.repo)),
        asvConfigPath,
        ...settings,
      };
      return { key: commitKey(g.repo, g.sha), input, repo: g.repo, at: g.at };
    });
  },

  async run(ctx: ItemContext, item: WorkItem<SynthesizeInput>) {
    const input = synthesizeInputSchema.parse(item.input);
    const envs = new Environments(ctx.services.docker, buildSettings(ctx.config), ctx.log);
    const target = await prepareTarget(envs, ctx.services.docker, input, ctx.log, ctx.signal);
    if (!target) return { status: 'dropped', reason: 'no-asv-config', detail: `no asv.conf.json in ${input.repo} at ${input.sha}` };
    const { python } = target;

    const result = await synthesizeCommit(
      target,
      {
        envs,
        store: new BuildScripts(ctx.db),
        llm: input.agent === null ? null : llmOf(ctx),
        hasFallback: Boolean(ctx.config.llm.fallbackModel),
        config: ctx.config.synthesize,
        log: ctx.log,
        metrics: ctx.metrics,
        runId: ctx.runId,
        signal: ctx.signal,
      },
    );
    if (result.status === 'failed') {
      return {
        status: 'dropped',
        reason: 'no-verified-script',
        detail: `${result.attempts} attempt(s); last failure: ${result.lastFailure ?? 'none'}; ${result.agentStopped ?? ''}`.trim(),
      };
    }
    const a = result.attempt;
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
      baseImage: input.baseImage,
      toolchainImage: target.toolchainImage,
      asvConfigPath: target.asvConfigPath,
      importName: target.facts.importName,
      cloneSource: input.cloneSource,
    };
    return {
      status: 'done',
      output,
      detail: `verified a ${a.source} script (${a.sourceDetail ?? ''}) after ${result.attempts} attempt(s); python ${python.version}: ${python.reason}`,
    };
  },
});

