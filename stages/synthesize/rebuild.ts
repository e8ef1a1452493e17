import type { BuildScripts, RebuildSpec } from '../../cache/build-scripts.js';
import type { EnvironmentLock } from '../../pipeline/concepts/records/environment-lock.js';
import type { Config } from '../../pipeline/config/schema.js';
import type { Logger } from '../../pipeline/logging.js';
import type { DockerService } from '../../pipeline/services/docker.js';
import { attemptRecordOf, buildSettings, Environments, wheelhouseOf } from '../../pipeline/services/environments/environment.js';
import { describeFailure } from '../../pipeline/services/environments/failure.js';
import { attemptImageTag, envImageTag } from '../../pipeline/services/environments/image-names.js';
import { scriptHash } from '../../pipeline/services/environments/script-check.js';
import { repositoryEnvironment } from '../../pipeline/config/repository-environment.js';

export interface RebuildResult {
  readonly key: string;
  readonly verified: boolean;
  readonly imageTag: string | null;
  /** The attempt recorded in the store (when a store was given). */
  readonly attemptId: number | null;
  readonly failure: string | null;
  readonly steps: readonly {
    readonly step: string;
    readonly ok: boolean;
    readonly exitCode: number | null;
    readonly timedOut: boolean;
    readonly durationMs: number;
  }[];
  readonly durationMs: number;
}

/**
 * Rebuilds a commit's environment from what the store keeps (`perfmine cache show`): the base
 * image, the clone source, the commit and the script. Missing tiers are rebuilt from the base
 * image; the result is verified like any attempt and tagged as the commit's environment.
 */
export async function rebuildEnvironment(
  docker: DockerService,
  config: Config,
  spec: RebuildSpec,
  options: {
    readonly log: Logger;
    readonly store?: BuildScripts;
    readonly commitDate: string;
    /** The lock of the attempt rebuilt: installed first, so that the rebuild has the same distributions. */
    readonly lock?: EnvironmentLock | null;
    readonly runId?: number | null;
    readonly signal?: AbortSignal;
  },
): Promise<RebuildResult> {
  const envs = new Environments(docker, buildSettings(config), options.log);
  const tiers = await envs.ensureTiers(spec, wheelhouseOf(config), options.signal);
  const toolchain = tiers.toolchainImage;
  const repoImage = tiers.repoImage;
  const tag = attemptImageTag(spec.repo, spec.sha, `${Date.now()}`);
  const run = await envs.buildAndVerify(
    {
      repo: spec.repo,
      sha: spec.sha,
      script: spec.script,
      sourceImage: tiers.sourceImage,
      commitDate: options.commitDate,
      baseImage: spec.baseImage,
      verifyNetwork: config.validate.networkRepos.includes(spec.repo),
      pytestArgs: repositoryEnvironment(config, spec.repo).pytestArgs,
      lock: options.lock ?? null,
      importName: spec.importName,
      asvConfigPath: spec.asvConfigPath,
      pythonVersion: spec.pythonVersion,
    },
    tag,
    options.signal,
  );
  const verified = run.failure === null && run.image !== null;
  const finalTag = verified ? envImageTag(spec.repo, spec.sha) : null;
  if (finalTag) await envs.promote(tag, finalTag);
  else if (run.image) await envs.discard(run.image);
  const attemptId =
    options.store?.record({
      ...spec,
      toolchainImage: toolchain,
      repoImage,
      commitDate: options.commitDate,
      scriptHash: scriptHash(spec.script),
      source: 'cache',
      sourceDetail: 'perfmine cache rebuild',
      ...attemptRecordOf(run),
      llmCalls: 0,
      promptTokens: 0,
      completionTokens: 0,
      costUsd: 0,
      model: null,
      imageTag: finalTag,
      runId: options.runId ?? null,
    }) ?? null;
  return {
    key: `${spec.repo}@${spec.sha}`,
    verified,
    imageTag: finalTag,
    attemptId,
    failure: run.failure ? describeFailure(run.failure) : null,
    steps: run.steps.map((s) => ({ step: s.step, ok: s.ok, exitCode: s.exitCode, timedOut: s.timedOut, durationMs: s.durationMs })),
    durationMs: run.durationMs,
  };
}
