import type { Config } from '../../pipeline/config/schema.js';
import type { Db } from '../../cache/store.js';
import { ConfigError, OutsideServiceError } from '../../pipeline/errors.js';
import type { Logger } from '../../pipeline/logging.js';
import type { DockerService } from '../../pipeline/services/docker.js';
import type { AgentTool } from '../../pipeline/services/llm-port.js';
import { buildAgentTools } from './agent-tools.js';
import type { BuildPort, CommitTarget, PreparedTarget } from './build-port.js';
import { buildSettings, Environments, wheelhouseOf, type AttemptRun } from '../../pipeline/services/environments/environment.js';
import { attemptImageTag, envImageTag } from '../../pipeline/services/environments/image-names.js';
import { prepareTarget, type TargetRequest } from './target.js';
import { repositoryEnvironment } from '../../pipeline/config/repository-environment.js';

/** The build port on the Docker engine: tiered images, build and verification containers (environment.ts). */
export class DockerBuildPort implements BuildPort {
  readonly #docker: DockerService;
  readonly #config: Config;
  readonly #log: Logger;
  readonly #envs: Environments;
  #sequence = 0;

  constructor(docker: DockerService, config: Config, log: Logger, store: Db | null = null) {
    this.#docker = docker;
    this.#config = config;
    this.#log = log;
    this.#envs = new Environments(docker, buildSettings(config, store), log);
  }

  async preflight(signal: AbortSignal): Promise<void> {
    const docker = this.#docker;
    const config = this.#config;
    try {
      await docker.ping();
    } catch (error) {
      if (error instanceof OutsideServiceError) {
        throw new ConfigError(`docker: ${error.message}`, {
          reason: 'docker-unreachable',
          fix: error.fix ?? 'start the Docker engine, or set DOCKER_HOST',
        });
      }
      throw error;
    }
    const toolchain = await this.#envs.ensureToolchain(config.docker.baseImage, wheelhouseOf(config), signal);
    const asvEngine = config.validate.engine === 'asv';
    // the harness needs only the image's Python; the asv engine needs asv in it
    const probe = await docker.run({
      image: toolchain.image,
      cmd: ['bash', '-c', asvEngine ? 'command -v asv >/dev/null && asv --version' : 'command -v python3 >/dev/null && python3 --version'],
      network: 'none',
      timeoutMs: 60_000,
      limits: this.#envs.settings.limits,
      labels: { 'org.perfmine.role': 'preflight' },
    });
    if (probe.exitCode !== 0 && !asvEngine) {
      throw new ConfigError(
        `docker.baseImage: ${toolchain.image} has no python3 (${(probe.stderr || probe.stdout).trim().slice(-200) || 'python3: not found'})`,
        {
          reason: 'no-python-in-image',
          fix: 'use a base image with Python 3.8 or newer (scripts/build-base-image.sh builds perfmine/base:bookworm from Debian packages)',
        },
      );
    }
    if (probe.exitCode !== 0) {
      throw new ConfigError(
        `docker.baseImage: ${toolchain.image} has no asv (${(probe.stderr || probe.stdout).trim().slice(-200) || 'asv: not found'})`,
        {
          reason: 'no-asv-in-image',
          fix: 'set validate.engine to perfmine (needs no asv), or build the base image from scripts/base-pypi.Dockerfile (hosts with PyPI), or set synthesize.asv.wheelhouse to a directory of asv wheels',
        },
      );
    }
    const removed = await docker.removeLeftovers();
    if (removed.containers.length + removed.images.length > 0) {
      this.#log.info({ containers: removed.containers.length, images: removed.images.length }, 'removed leftovers of a crashed run');
    }
  }

  prepareTarget(request: TargetRequest, signal: AbortSignal): Promise<PreparedTarget> {
    return prepareTarget(this.#envs, this.#docker, request, this.#log, signal);
  }

  async buildAndVerify(target: CommitTarget, script: string, signal: AbortSignal): Promise<AttemptRun> {
    this.#sequence += 1;
    const tag = attemptImageTag(target.repo, target.sha, `${Date.now()}${this.#sequence}`);
    try {
      return await this.#envs.buildAndVerify(
        {
          repo: target.repo,
          sha: target.sha,
          commitDate: target.commitDate,
          baseImage: target.baseImage,
          verifyNetwork: this.#config.validate.networkRepos.includes(target.repo),
          pytestArgs: repositoryEnvironment(this.#config, target.repo).pytestArgs,
          script,
          sourceImage: target.sourceImage,
          importName: target.facts.importName,
          asvConfigPath: target.asvConfigPath,
          pythonVersion: target.python.version,
          layout: { benchmarkDir: target.benchmarkDir, testDirs: target.facts.testDirs },
        },
        tag,
        signal,
      );
    } catch (error) {
      await this.#envs.discard(tag).catch(() => undefined);
      throw error;
    }
  }

  async keep(target: CommitTarget, image: string): Promise<string> {
    const finalTag = envImageTag(target.repo, target.sha);
    await this.#envs.promote(image, finalTag);
    return finalTag;
  }

  release(image: string): Promise<void> {
    return this.#envs.discard(image);
  }

  agentTools(target: CommitTarget, lastImage: () => string | null): AgentTool[] {
    return buildAgentTools({
      tree: target.tree,
      sha: target.sha,
      docker: this.#docker,
      sourceImage: target.sourceImage,
      lastImage,
      pythonVersion: target.python.version,
      limits: this.#envs.settings.limits,
      timeoutMs: this.#envs.settings.timeoutsMs.tool,
    });
  }
}
