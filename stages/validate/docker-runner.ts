import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { fetchImage } from '../../pipeline/services/environments/image-registry.js';
import type { Logger } from '../../pipeline/logging.js';
import type { Metrics } from '../../pipeline/metrics.js';
import { containerLimits, type ContainerLimits, type DockerService, type RunResult } from '../../pipeline/services/docker.js';
import type { Config } from '../../pipeline/config/schema.js';
import type { TarEntry } from '../../pipeline/services/tar.js';
import { ItemError } from '../../pipeline/errors.js';
import { sha256 } from '../../pipeline/hash.js';
import {
  buildSettings,
  Environments,
  parseCloneSource,
  wheelhouseOf,
  type AttemptRun,
  type BuildSettings,
  type CommitBuildSpec,
} from '../../pipeline/services/environments/environment.js';
import { describeFailure } from '../../pipeline/services/environments/failure.js';
import { attemptImageTag, expertAttemptTag, expertImageTag } from '../../pipeline/services/environments/image-names.js';
import { asvInvocationScript, readInvocationOutput } from './protocol/asv-invocation.js';
import { readExpertAttempt } from './protocol/expert-image.js';
import { framedInt, parseFramedOutput } from './protocol/framed-output.js';
import { pytestScript } from './protocol/pytest-script.js';
import { snapshotScript } from './protocol/snapshot-script.js';
import { ContainerHarnessWorker, serveCommand } from './harness/container-worker.js';
import { HARNESS_FILES, harnessTarEntries, SNAPSHOT_CONTAINER_PATH } from '../../pipeline/services/environments/harness-files.js';
import type { HarnessWorker } from './harness/interleave.js';
import type {
  CandidateEnvironment,
  ExpertBuildOutcome,
  HarnessWorkerSpec,
  MeasurementRunner,
  SnapshotRequest,
  SnapshotRun,
} from './runner-port.js';

/**
 * The measurement runner against the Docker engine, through the one container adapter
 * (DockerService): every container fresh, limited, unprivileged, labelled, without network unless
 * the repository allows it. The expert image is built by synthesize's machinery (Environments:
 * checkout + patch + the verified build script, then the same verification, the tamper check
 * allowing exactly the patch). Inputs (the snapshot helper, the base's record) are put into the
 * container before it starts; outputs come back framed on stdout. Nothing is mounted.
 */

/** Output kept from a container whose stdout carries files (results, JUnit, snapshot JSON). */
const FILE_OUTPUT_CHARS = 64 * 1024 * 1024;
/** Where the snapshot helper and the base's record go in a container. */
const HELPER_DIR = 'perfmine/validate';

export interface DockerRunnerOptions {
  readonly docker: DockerService;
  readonly limits: ContainerLimits;
  /** Synthesize's build settings (limits, time limits, build network, asv discovery), for the expert build. */
  readonly build: BuildSettings;
  /** synthesize.asv.wheelhouse, when the toolchain tier must be rebuilt. */
  readonly wheelhouse: string | null;
  readonly log: Logger;
  /** `docker.measureMs` (asv invocations) is added here. */
  readonly metrics?: Metrics;
  /** executor.registry: where a verified base image missing here is pulled from before it is rebuilt. */
  readonly registry?: string | null;
}

let expertSequence = 0;
/** The harness's files by name and SHA-256 (read once: they are perfmine's own). */
let harnessDigests: (readonly [string, string])[] | null = null;
const execFileP = promisify(execFile);

/** The runner of a configuration (validate, `perfmine score`, and their Slurm jobs): its limits, build settings and registry. */
export function dockerRunnerOf(config: Config, docker: DockerService, log: Logger, metrics?: Metrics): DockerMeasurementRunner {
  return new DockerMeasurementRunner({
    docker,
    limits: containerLimits(config.docker),
    build: buildSettings(config),
    wheelhouse: wheelhouseOf(config),
    log,
    ...(metrics ? { metrics } : {}),
    registry: config.executor.registry ?? null,
  });
}

export class DockerMeasurementRunner implements MeasurementRunner {
  readonly #docker: DockerService;
  readonly #limits: ContainerLimits;
  readonly #build: BuildSettings;
  readonly #wheelhouse: string | null;
  readonly #log: Logger;
  readonly #metrics: Metrics | undefined;
  readonly #registry: string | null;
  #hostCpus: Promise<number> | null = null;

  constructor(options: DockerRunnerOptions) {
    this.#docker = options.docker;
    this.#limits = options.limits;
    this.#build = options.build;
    this.#wheelhouse = options.wheelhouse;
    this.#log = options.log;
    this.#metrics = options.metrics;
    this.#registry = options.registry ?? null;
  }

  async prepare(): Promise<void> {
    const removed = await this.#docker.removeLeftovers();
    if (removed.containers.length + removed.images.length > 0) {
      this.#log.info({ containers: removed.containers.length, images: removed.images.length }, 'removed leftovers of a crashed run');
    }
  }

  async #bash(
    env: CandidateEnvironment,
    image: string,
    script: string,
    timeoutMs: number,
    role: string,
    signal?: AbortSignal,
    files?: readonly TarEntry[],
  ): Promise<RunResult> {
    return this.#docker.run(
      {
        image,
        cmd: ['bash', '-c', script],
        env: env.env,
        network: env.network ? 'bridge' : 'none',
        timeoutMs,
        limits: this.#limits,
        tailChars: FILE_OUTPUT_CHARS,
        labels: { 'org.perfmine.item': env.key, 'org.perfmine.role': role },
        ...(files ? { files } : {}),
      },
      signal,
    );
  }

  async buildExpert(env: CandidateEnvironment, patch: string, timeoutMs: number, signal?: AbortSignal): Promise<ExpertBuildOutcome> {
    const s = env.synthesized;
    const envs = new Environments(this.#docker, { ...this.#build, timeoutsMs: { ...this.#build.timeoutsMs, build: timeoutMs } }, this.#log);
    const tiers = await envs.ensureTiers({ ...s, repoImage: s.repoImageTag }, this.#wheelhouse, signal);
    const spec: CommitBuildSpec = {
      repo: s.repo,
      sha: s.sha,
      script: s.script,
      sourceImage: tiers.sourceImage,
      commitDate: s.commitDate,
      baseImage: s.baseImage,
      verifyNetwork: env.network,
      pytestArgs: env.pytestArgs ?? [],
      lock: s.lock ?? null,
      importName: s.importName,
      asvConfigPath: s.asvConfigPath,
      pythonVersion: s.pythonVersion,
    };
    await this.#ensureBase(envs, env, spec, signal);
    const tag = expertAttemptTag(s.repo, env.number, `${process.pid}-${++expertSequence}`);
    let run: AttemptRun;
    try {
      run = await envs.buildAndVerify({ ...spec, patch }, tag, signal);
    } catch (error) {
      await envs.discard(tag).catch(() => undefined);
      throw error;
    }
    const reading = readExpertAttempt(run);
    if (!reading.ok && run.image) await envs.discard(run.image);
    return { reading, image: reading.ok ? run.image : null, durationMs: run.durationMs };
  }

  /**
   * The base side is synthesize's verified image; when this engine lacks it (pruned since
   * synthesize ran, or built on another node), it is pulled from executor.registry when one is
   * set, else built again from the same script and verified again, as `perfmine cache rebuild` does.
   */
  async #ensureBase(envs: Environments, env: CandidateEnvironment, spec: CommitBuildSpec, signal?: AbortSignal): Promise<void> {
    if (await this.#docker.imageExists(env.baseImage)) return;
    if (this.#registry !== null && (await fetchImage(this.#docker, this.#registry, env.baseImage, this.#log))) return;
    this.#log.info({ image: env.baseImage }, 'the verified base image is gone: building it again');
    const tag = attemptImageTag(spec.repo, spec.sha, `${process.pid}-base-${++expertSequence}`);
    let run: AttemptRun;
    try {
      run = await envs.buildAndVerify(spec, tag, signal);
    } catch (error) {
      await envs.discard(tag).catch(() => undefined);
      throw error;
    }
    if (run.failure !== null || run.image === null) {
      if (run.image) await envs.discard(run.image);
      throw new ItemError(
        'base-image-unverified',
        `${env.key}: the base image ${env.baseImage} was gone, and building it again failed: ${describeFailure(run.failure!)}`,
        {
          fix: 'run `perfmine stage synthesize --force` for its base commit',
        },
      );
    }
    await envs.promote(tag, env.baseImage);
  }

  async runInvocation(...[env, image, invocation, layout, settings, timeoutMs, signal]: Parameters<MeasurementRunner['runInvocation']>) {
    const result = await this.#bash(env, image, asvInvocationScript(layout, settings), timeoutMs, `asv-${invocation.role}`, signal);
    this.#metrics?.add('docker.measureMs', result.durationMs);
    this.#metrics?.add('validate.invocations');
    return {
      output: readInvocationOutput(result.stdout),
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      durationMs: result.durationMs,
    };
  }

  async openHarnessWorker(env: CandidateEnvironment, image: string, spec: HarnessWorkerSpec, signal?: AbortSignal): Promise<HarnessWorker> {
    const session = await this.#docker.session(
      {
        image,
        cmd: serveCommand({ python: env.python, configPath: spec.configPath, bench: spec.bench }),
        env: { ...env.env, PYTHONHASHSEED: spec.hashSeed, PYTHONDONTWRITEBYTECODE: '1' },
        workingDir: env.repoDir,
        network: env.network ? 'bridge' : 'none',
        limits: this.#limits,
        cpuset: spec.cpuset,
        labels: { 'org.perfmine.item': env.key, 'org.perfmine.role': `harness-${spec.side}` },
        files: harnessTarEntries(),
        maxLifetimeMs: spec.maxLifetimeMs,
      },
      signal,
    );
    return ContainerHarnessWorker.start(session, spec.startTimeoutMs, signal);
  }

  async hostCpus(): Promise<number> {
    this.#hostCpus ??= this.#docker.hostCpus();
    return this.#hostCpus;
  }

  /** The image's id (an image built again has another), the containers' limits and the harness's files, as JSON. */
  async workerIdentity(_env: CandidateEnvironment, image: string): Promise<string | null> {
    const facts = await this.#docker.inspectImage(image).catch(() => null);
    if (!facts) return null;
    harnessDigests ??= HARNESS_FILES.map((file) => [file.slice(file.lastIndexOf('/') + 1), sha256(readFileSync(file))]);
    return JSON.stringify({ image: facts.id, limits: this.#limits, harness: harnessDigests });
  }

  /**
   * The files changed between another commit and the base: from perfmine's clone (the local
   * clone of the git source, or the repository tier of a URL clone), never from a task image,
   * whose history holds no later commit. Null when they cannot be told.
   */
  async changedFiles(env: CandidateEnvironment, fromSha: string, signal?: AbortSignal): Promise<ReadonlySet<string> | null> {
    if (!/^[0-9a-f]{7,40}$/.test(fromSha)) return null;
    const s = env.synthesized;
    const clone = parseCloneSource(s.cloneSource);
    const diff = ['diff', '--name-only', fromSha, s.sha];
    let out: string | null;
    if (clone.kind === 'git') {
      out = await execFileP('git', ['-C', clone.path, ...diff], { maxBuffer: 64 * 1024 * 1024, encoding: 'utf8', signal }).then(
        (r) => r.stdout,
        () => null,
      );
    } else {
      if (!(await this.#docker.imageExists(s.repoImageTag))) return null;
      const result = await this.#bash(env, s.repoImageTag, `git -C /repo ${diff.join(' ')}`, 120_000, 'changed-files', signal);
      out = result.exitCode === 0 ? result.stdout : null;
    }
    if (out === null) return null;
    return new Set(
      out
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean),
    );
  }

  async runTests(
    env: CandidateEnvironment,
    image: string,
    options: { args: readonly string[]; timeLimitSeconds: number },
    signal?: AbortSignal,
  ) {
    const script = pytestScript({
      repoDir: env.repoDir,
      python: env.python,
      timeLimitSeconds: options.timeLimitSeconds,
      args: options.args,
    });
    // the container outlives pytest's own limit by a margin, so that pytest can write its report
    const result = await this.#bash(env, image, script, (options.timeLimitSeconds + 120) * 1000, 'pytest', signal);
    const framed = parseFramedOutput(result.stdout);
    return {
      exitCode: framedInt(framed, 'rc'),
      timedOut: result.timedOut,
      junitXml: framed.files.find((f) => f.kind === 'junit')?.content ?? null,
      log: framed.files.find((f) => f.kind === 'log')?.content ?? result.stderr,
      durationMs: result.durationMs,
    };
  }

  #snapshotResult(result: RunResult): SnapshotRun {
    const framed = parseFramedOutput(result.stdout);
    return {
      json: framed.files.find((f) => f.kind === 'snapshot')?.content ?? null,
      exitCode: framedInt(framed, 'rc'),
      timedOut: result.timedOut,
      log: framed.files.find((f) => f.kind === 'log')?.content ?? result.stderr,
      durationMs: result.durationMs,
    };
  }

  #settings(env: CandidateEnvironment, request: SnapshotRequest) {
    return {
      repoDir: env.repoDir,
      python: env.python,
      configPath: request.configPath,
      bench: request.bench,
      perCallSeconds: request.perCallSeconds,
      timeLimitSeconds: request.timeLimitSeconds,
    };
  }

  async recordSnapshot(env: CandidateEnvironment, image: string, request: SnapshotRequest, signal?: AbortSignal) {
    const script = snapshotScript(this.#settings(env, request), { script: SNAPSHOT_CONTAINER_PATH, mode: 'record' });
    const result = await this.#bash(
      env,
      image,
      script,
      (request.timeLimitSeconds + 60) * 1000,
      'snapshot-record',
      signal,
      harnessTarEntries(),
    );
    return this.#snapshotResult(result);
  }

  async compareSnapshot(env: CandidateEnvironment, image: string, baseline: string, request: SnapshotRequest, signal?: AbortSignal) {
    const script = snapshotScript(this.#settings(env, request), {
      script: SNAPSHOT_CONTAINER_PATH,
      mode: 'compare',
      baseline: `/${HELPER_DIR}/baseline.json`,
    });
    const files = [...harnessTarEntries(), { name: `${HELPER_DIR}/baseline.json`, content: baseline }];
    return this.#snapshotResult(
      await this.#bash(env, image, script, (request.timeLimitSeconds + 60) * 1000, 'snapshot-compare', signal, files),
    );
  }

  async release(images: readonly string[]) {
    for (const image of images) await this.#docker.removeImage(image);
  }

  async keep(env: CandidateEnvironment, image: string): Promise<string> {
    const lasting = expertImageTag(env.synthesized.repo, env.number);
    await this.#docker.tagImage(image, lasting);
    await this.#docker.removeImage(image);
    return lasting;
  }
}
