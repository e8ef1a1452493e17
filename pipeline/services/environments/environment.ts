import { execFile } from 'node:child_process';
import type { Dirent } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../../config/schema.js';
import { ConfigError, ItemError, OutsideServiceError } from '../../errors.js';
import { sha256 } from '../../hash.js';
import type { Logger } from '../../logging.js';
import type { Source } from '../../scope.js';
import { containerLimits, type BuildResult, type BuildSpec, type ContainerLimits, type DockerService, type RunResult } from '../docker.js';
import type { TarEntry } from '../tar.js';
import type { NewAttempt, StoredScan } from '../../../cache/build-scripts.js';
import { ImageInventories } from '../../../cache/image-inventories.js';
import { scanImage, scanRecord, scanStepResult } from './image-scan.js';
import { classifyFailure, describeFailure, type Failure, type StepResult } from './failure.js';
import { imageSlug, repoImageTag, sourceImageTag, toolchainTag } from './image-names.js';
import { historyLeaks } from './seal.js';
import type { Db } from '../../../cache/store.js';
import { startBuildIndex, type BuildIndex, type IndexSettings } from '../package-index/build-index.js';
import type { IndexProblem } from '../package-index/index-session.js';
import { vendorsWheels } from '../../concepts/vendored-wheels.js';
import { buildConstraints, installedSetSchema, lockOf, requirementsLock, type EnvironmentLock, type InstalledSet } from './lock.js';
import { LOCK_READER_PATH } from './source-tier.js';
import { SEAL_PATH, sourceTierDockerfile, sourceTierFiles, sourceTierKey, TASK_SOURCE_DIR } from './source-tier.js';
import { checkScript } from './script-check.js';
import { bashSyntaxError } from './script-syntax.js';
import {
  BUILD_COMMAND,
  categorizeChanged,
  CHECKOUT_MARKER,
  PREPARE_SCRIPT,
  REPO_DIR,
  SCRIPT_PATH,
  readVerifyRun,
  tamperedPaths,
  verifyCommands,
  verifyContainerFiles,
  verifyContainerTimeoutMs,
  VERIFY_RUN_DIR,
  type BenchmarkDiscovery,
} from './verification.js';

const execFileP = promisify(execFile);

/** Limits, time limits and networks of builds and verification (from the configuration). */
export interface BuildSettings {
  readonly limits: ContainerLimits;
  readonly timeoutsMs: {
    readonly repoImage: number;
    readonly build: number;
    readonly import: number;
    readonly asv: number;
    readonly pytest: number;
    readonly tamper: number;
    readonly tool: number;
  };
  readonly tailChars: number;
  /**
   * The build step's network: `index` (none but the package index time machine, as of the
   * commit's date), `bridge` (Docker's network, whatever the index serves today) or `none`.
   */
  readonly buildNetwork: 'index' | 'bridge' | 'none';
  /** The time machine's settings (synthesize.index); null unless `index`. */
  readonly index: IndexSettings | null;
  /** Where the time machine caches upstream pages and the outside scan keeps base inventories (null: this process only). */
  readonly store: Db | null;
  /**
   * The time machine keeps the bytes of the files it serves in `store` (by SHA-256), for the task
   * folders that carry their locked files (emit.vendorWheels); default false.
   */
  readonly keepServedFiles?: boolean;
  /** How verification discovers the benchmarks: the harness (engine perfmine), or asv (`check`, `just-discover`). */
  readonly asvDiscover: BenchmarkDiscovery;
}

/**
 * The build settings of a configuration; `store` caches the index's upstream pages (null: no cache,
 * e.g. on a Slurm node) and keeps the files it serves when task folders will carry them
 * (`emit.vendorWheels`: `auto` keeps those of an index that is not public, such as the demo's).
 */
export function buildSettings(config: Config, store: Db | null = null): BuildSettings {
  const t = config.synthesize.timeouts;
  return {
    limits: containerLimits(config.docker),
    timeoutsMs: {
      repoImage: t.repoImage * 1000,
      build: t.build * 1000,
      import: t.import * 1000,
      asv: t.asv * 1000,
      pytest: t.pytest * 1000,
      tamper: t.tamper * 1000,
      tool: t.tool * 1000,
    },
    tailChars: config.synthesize.tailChars,
    buildNetwork: config.synthesize.buildNetwork,
    index: config.synthesize.buildNetwork === 'index' ? config.synthesize.index : null,
    store,
    keepServedFiles: store !== null && vendorsWheels(config.emit.vendorWheels, config.synthesize.index.upstream),
    asvDiscover: discoveryOf(config),
  };
}

/** How environments are verified to discover their benchmarks: with the engine validate measures with. */
export function discoveryOf(config: Config): BenchmarkDiscovery {
  return config.validate.engine === 'perfmine' ? 'harness' : config.synthesize.asv.discover;
}

/** What of `synthesize.index` changes what a build installs (its time limits and retries do not). */
export interface IndexResultSettings {
  readonly upstream: string;
  readonly cutoff: string;
  readonly slackDays: number;
  readonly missingUploadTime: 'exclude' | 'include';
}

/**
 * What the time machine serves a build (null when builds do not go through it). A loopback
 * upstream's port is left out: a loopback index (the demo's, a test's) is started afresh by each
 * run on a free port, and is the same index whatever port it got.
 */
export function indexResultSettings(config: Config): IndexResultSettings | null {
  if (config.synthesize.buildNetwork !== 'index') return null;
  const { upstream, cutoff, slackDays, missingUploadTime } = config.synthesize.index;
  return { upstream: withoutLoopbackPort(upstream), cutoff, slackDays, missingUploadTime };
}

/** `http://127.0.0.1:PORT/...` → `http://127.0.0.1:*\/...` (also localhost and [::1]); any other upstream as it is. Pure. */
export function withoutLoopbackPort(upstream: string): string {
  return upstream.replace(/^(https?:\/\/(?:127\.0\.0\.1|localhost|\[::1\])):\d+(?=\/|$)/i, '$1:*');
}

/** The asv wheelhouse of the toolchain tier: only the asv engine needs asv in the image. */
export function wheelhouseOf(config: Config): string | null {
  return config.validate.engine === 'asv' ? config.synthesize.asv.wheelhouse : null;
}

/** Where the repository image clones from: a local clone (bundled in), or a URL. */
export type CloneSource = { readonly kind: 'git'; readonly path: string } | { readonly kind: 'url'; readonly url: string };

export function cloneSourceOf(source: Source, repo: string): CloneSource {
  return source.kind === 'git' ? { kind: 'git', path: source.path } : { kind: 'url', url: `https://github.com/${repo}.git` };
}

export function formatCloneSource(clone: CloneSource): string {
  return clone.kind === 'git' ? `git:${clone.path}` : clone.url;
}

export function parseCloneSource(text: string): CloneSource {
  if (text.startsWith('git:') && text.length > 4) return { kind: 'git', path: text.slice(4) };
  if (/^https:\/\/[^\s]+$/.test(text)) return { kind: 'url', url: text };
  throw new ItemError('bad-clone-source', `not a clone source: ${text}`);
}

/** One build of a commit with a script (and, for validate's expert side, a patch). */
export interface CommitBuildSpec {
  readonly repo: string;
  readonly sha: string;
  readonly script: string;
  /** The commit's source tier to build from (the commit sealed at /repo, source-tier.ts). */
  readonly sourceImage: string;
  /** The image every environment starts from: the outside scan compares the built image with it. */
  readonly baseImage: string;
  readonly importName: string | null;
  readonly asvConfigPath: string | null;
  /** `X.Y`: the build and verification use `pythonX.Y` (PERFMINE_PYTHON). */
  readonly pythonVersion: string | null;
  /** A unified diff applied after the checkout, before the script (validate's expert side). */
  readonly patch?: string | null;
  /** The commit's committer date (ISO 8601): the index time machine's cutoff. */
  readonly commitDate?: string | null;
  /**
   * The environment's lock (a verified build's): installed first, hash-checked, so that this build
   * (validate's expert side, a score, a rebuild) has exactly the dependencies that were measured.
   */
  readonly lock?: EnvironmentLock | null;
  /**
   * Whether verification (the benchmarks' discovery imports the suite) may use the network: for a
   * repository in `validate.networkRepos`, whose suite downloads data when it is imported. Default none.
   */
  readonly verifyNetwork?: boolean;
  /** Arguments verification's `pytest --collect-only` adds (`repositories."owner/name".pytestArgs`). */
  readonly pytestArgs?: readonly string[];
  /** What a changed path is, for the tamper check's message. */
  readonly layout?: { readonly benchmarkDir: string | null; readonly testDirs: readonly string[] };
}

export interface AttemptRun {
  readonly steps: readonly StepResult[];
  /** Null when every step passed: the image is verified. */
  readonly failure: Failure | null;
  /** The built image's tag (verified or not), or null when nothing was built. */
  readonly image: string | null;
  readonly durationMs: number;
  /** What the verified image holds: its distributions, joined with what the index served the build; null when not verified. */
  readonly lock: EnvironmentLock | null;
  /** The outside scan's verdict, when verification passed and the image was scanned. */
  readonly scan: StoredScan | null;
}

/** What the attempt table records of a run: its outcome, the failing step and its output tails, every step. */
export function attemptRecordOf(
  run: AttemptRun,
): Pick<
  NewAttempt,
  'outcome' | 'failingStep' | 'failureKind' | 'failure' | 'stdoutTail' | 'stderrTail' | 'steps' | 'durationMs' | 'lock' | 'scan'
> {
  const verified = run.failure === null && run.image !== null;
  const failing = run.steps.find((s) => !s.ok) ?? run.steps.find((s) => s.step === 'build');
  return {
    outcome: verified ? 'verified' : run.failure?.step === 'script' ? 'rejected' : 'failed',
    failingStep: run.failure?.step ?? null,
    failureKind: run.failure?.kind ?? null,
    failure: run.failure ? describeFailure(run.failure) : null,
    stdoutTail: failing?.stdout ?? '',
    stderrTail: failing?.stderr ?? '',
    steps: run.steps.map((s) => ({
      step: s.step,
      ok: s.ok,
      exitCode: s.exitCode,
      timedOut: s.timedOut,
      durationMs: s.durationMs,
      ...(s.detail ? { detail: s.detail } : {}),
    })),
    durationMs: run.durationMs,
    lock: run.lock,
    scan: run.scan,
  };
}

function pythonEnv(version: string | null): Record<string, string> {
  return version ? { PERFMINE_PYTHON: `python${version}` } : {};
}

function stepOf(step: StepResult['step'], r: RunResult, ok: boolean, detail?: string): StepResult {
  return {
    step,
    ok,
    exitCode: r.exitCode,
    timedOut: r.timedOut,
    ...(r.diskExceeded ? { diskExceeded: true } : {}),
    stdout: r.stdout,
    stderr: r.stderr,
    durationMs: r.durationMs,
    ...(detail === undefined ? {} : { detail }),
  };
}

/**
 * The environment tiers over the one Docker adapter: base (toolchain) → repository (the clone)
 * → commit (checkout + docker_build.sh, committed from a container run with limits and a time
 * limit), and the verification of a commit image. Every step keeps its logs' tails.
 */
export class Environments {
  readonly docker: DockerService;
  readonly settings: BuildSettings;
  readonly #log: Logger;

  constructor(docker: DockerService, settings: BuildSettings, log: Logger) {
    this.docker = docker;
    this.settings = settings;
    this.#log = log;
  }

  /**
   * The image builds start from: the base image, or the base image with asv installed from a
   * local wheelhouse (`pip install --no-index --find-links`), built once per base and wheelhouse.
   */
  async ensureToolchain(
    baseImage: string,
    wheelhouse: string | null,
    signal?: AbortSignal,
  ): Promise<{ image: string; baseImageId: string }> {
    const base = await this.docker.inspectImage(baseImage);
    if (!base) {
      throw new ConfigError(`docker.baseImage: no image ${baseImage} in the Docker engine`, {
        reason: 'no-base-image',
        fix: 'build it with scripts/build-base-image.sh (air-gapped) or docker build -f scripts/base-pypi.Dockerfile, or set --base-image',
      });
    }
    if (!wheelhouse) return { image: baseImage, baseImageId: base.id };
    let names: string[];
    try {
      names = (await readdir(wheelhouse)).filter((n) => n.endsWith('.whl') || n.endsWith('.tar.gz')).sort();
    } catch (error) {
      throw new ConfigError(`synthesize.asv.wheelhouse: cannot read ${wheelhouse}: ${(error as Error).message}`, {
        reason: 'bad-wheelhouse',
      });
    }
    if (!names.some((n) => /^asv-/.test(n))) {
      throw new ConfigError(`synthesize.asv.wheelhouse: ${wheelhouse} holds no asv wheel`, {
        reason: 'bad-wheelhouse',
        fix: 'pip download asv -d DIR on a host with PyPI, then copy DIR here',
      });
    }
    const sizes = await Promise.all(names.map(async (n) => `${n}:${(await stat(join(wheelhouse, n))).size}`));
    const tag = toolchainTag(base.id, sha256(sizes.join('\n')));
    if (await this.docker.imageExists(tag)) return { image: tag, baseImageId: base.id };
    const context: TarEntry[] = [
      {
        name: 'Dockerfile',
        content: `FROM ${baseImage}\nCOPY wheelhouse /tmp/wheelhouse\nRUN python3 -m pip install --no-index --find-links /tmp/wheelhouse asv && rm -rf /tmp/wheelhouse && asv --version\n`,
      },
      ...names.map((n) => ({ name: `wheelhouse/${n}`, content: { file: join(wheelhouse, n) } })),
    ];
    const built = await this.#buildTier(
      {
        tag,
        context,
        labels: { 'org.perfmine.tier': 'toolchain' },
      },
      signal,
    );
    if (!built.ok)
      throw new ConfigError(
        `synthesize.asv.wheelhouse: installing asv from ${wheelhouse} failed: ${built.error}\n${built.log.slice(-2000)}`,
        { reason: 'toolchain-build-failed' },
      );
    return { image: tag, baseImageId: base.id };
  }

  /** An image of a tier (toolchain, repository, source), built with the tiers' time limit, the containers' limits and log tail. */
  #buildTier(spec: Pick<BuildSpec, 'tag' | 'context' | 'labels' | 'network'>, signal?: AbortSignal): Promise<BuildResult> {
    return this.docker.buildImage(
      { ...spec, timeoutMs: this.settings.timeoutsMs.repoImage, limits: this.settings.limits, tailChars: this.settings.tailChars },
      signal,
    );
  }

  /**
   * The repository tier: the toolchain plus a clone at /repo (no checkout). A local clone is
   * bundled into the build context (refs decide the tag); a URL is cloned with the network
   * (new commits are fetched by later builds).
   */
  async ensureRepoImage(repo: string, clone: CloneSource, toolchainImage: string, signal?: AbortSignal): Promise<string> {
    const toolchain = await this.docker.inspectImage(toolchainImage);
    if (!toolchain) throw new ConfigError(`no image ${toolchainImage}`, { reason: 'no-base-image' });
    const labels = { 'org.perfmine.tier': 'repo', 'org.perfmine.repo': repo };
    const finish = 'WORKDIR /repo\n';
    if (clone.kind === 'url') {
      const tag = repoImageTag(repo, `${toolchain.id}\n${clone.url}`);
      if (await this.docker.imageExists(tag)) return tag;
      const built = await this.#buildTier(
        {
          tag,
          context: [
            { name: 'Dockerfile', content: `FROM ${toolchainImage}\nRUN git clone -q --no-checkout ${clone.url} /repo\n${finish}` },
          ],
          labels,
          network: 'default',
        },
        signal,
      );
      if (!built.ok)
        throw new OutsideServiceError('git', 'clone-failed', `cloning ${clone.url} failed: ${built.error}`, { retryable: true });
      await this.pruneRepoImages(repo, tag);
      return tag;
    }
    const modules = await moduleGitDirs(clone.path);
    const refs = [
      await git(clone.path, ['show-ref', '--head']),
      ...(await Promise.all(modules.map(async (m) => `${m.name}\n${await git(m.gitDir, ['show-ref', '--head']).catch(() => '')}`))),
    ].join('\n');
    const tag = repoImageTag(repo, `${toolchain.id}\n${refs}`);
    if (await this.docker.imageExists(tag)) return tag;
    const dir = await mkdtemp(join(tmpdir(), 'perfmine-bundle-'));
    try {
      const bundle = join(dir, 'repo.bundle');
      await git(clone.path, ['bundle', 'create', bundle, '--all']).catch((error: unknown) => {
        throw incompleteClone(error, clone.path);
      });
      // the clone's submodule repositories, so that the source tier can seal each at its gitlinked commit
      const moduleEntries: TarEntry[] = [];
      for (const [i, m] of modules.entries()) {
        const file = join(dir, `module-${i}.bundle`);
        const made = await git(m.gitDir, ['bundle', 'create', file, '--all']).then(
          () => true,
          () => false,
        );
        if (made) moduleEntries.push({ name: `modules/${m.name}.bundle`, content: { file } });
      }
      const copyModules = moduleEntries.length > 0 ? 'COPY modules/ /perfmine/modules/\n' : '';
      const built = await this.#buildTier(
        {
          tag,
          context: [
            {
              name: 'Dockerfile',
              content: `FROM ${toolchainImage}\nCOPY repo.bundle /tmp/repo.bundle\n${copyModules}RUN git clone -q --no-checkout /tmp/repo.bundle /repo && rm /tmp/repo.bundle && git -C /repo remote remove origin\n${finish}`,
            },
            { name: 'repo.bundle', content: { file: bundle } },
            ...moduleEntries,
          ],
          labels,
        },
        signal,
      );
      if (!built.ok)
        throw new ItemError(
          'repo-image-failed',
          `building the repository image of ${repo} failed: ${built.error}\n${built.log.slice(-2000)}`,
        );
      this.#log.info({ repo, image: tag, durationMs: built.durationMs }, 'repository image built');
      await this.pruneRepoImages(repo, tag);
      return tag;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * The commit's source tier (source-tier.ts): the toolchain with the commit sealed at /repo and
   * perfmine's files, built from the repository tier in a first stage that no image keeps. Keyed
   * by the toolchain, the commit and perfmine's files, not by the clone: a newer clone does not
   * rebuild it.
   */
  async ensureSourceImage(
    repo: string,
    sha: string,
    toolchainImage: string,
    repoImage: () => Promise<string>,
    clone: CloneSource,
    signal?: AbortSignal,
  ): Promise<string> {
    const toolchain = await this.docker.inspectImage(toolchainImage);
    if (!toolchain) throw new ConfigError(`no image ${toolchainImage}`, { reason: 'no-base-image' });
    const tag = sourceImageTag(repo, sha, sourceTierKey(toolchain.id, sha));
    if (await this.docker.imageExists(tag)) return tag;
    const seal = async (clonedFrom: string) =>
      this.#buildTier(
        {
          tag,
          context: [
            { name: 'Dockerfile', content: sourceTierDockerfile({ repoImage: clonedFrom, toolchainImage, sha }) },
            ...sourceTierFiles(),
          ],
          labels: { 'org.perfmine.tier': 'source', 'org.perfmine.repo': repo, 'org.perfmine.sha': sha },
          // a URL clone older than the commit fetches it
          network: clone.kind === 'url' ? 'default' : 'none',
        },
        signal,
      );
    const clonedFrom = await repoImage();
    let built = await seal(clonedFrom);
    if (!built.ok && !(await this.docker.imageExists(clonedFrom))) {
      // The clone was removed between its check and its use (a user's `docker rmi`, an older
      // perfmine's prune, a test's clean-up): built again once, not reported as a failed seal
      // (which the engine words as a failed pull of the missing tag).
      this.#log.warn({ repo, sha, image: clonedFrom }, 'the repository image went away while sealing a commit from it: built again');
      built = await seal(await repoImage());
    }
    if (!built.ok)
      throw new ItemError(
        'source-image-failed',
        `sealing ${repo}@${sha.slice(0, 12)} into its source image failed: ${built.error}\n${built.log.slice(-2000)}`,
      );
    this.#log.info({ repo, sha, image: tag, durationMs: built.durationMs }, 'source image built');
    return tag;
  }

  /** A commit's source tier from a clone source (the repository tier built first when needed). */
  sourceFor(repo: string, sha: string, clone: CloneSource, toolchainImage: string, signal?: AbortSignal): Promise<string> {
    return this.ensureSourceImage(
      repo,
      sha,
      toolchainImage,
      () => this.ensureRepoImage(repo, clone, toolchainImage, signal),
      clone,
      signal,
    );
  }

  /**
   * The toolchain, repository and source tiers an environment was built on, as recorded
   * (synthesize's output, the build-script store), rebuilt from the base image and the clone
   * source when they are gone (a newer clone untags older repository images).
   */
  async ensureTiers(
    spec: {
      readonly repo: string;
      readonly sha: string;
      readonly baseImage: string;
      readonly toolchainImage: string;
      readonly repoImage: string;
      readonly cloneSource: string;
    },
    wheelhouse: string | null,
    signal?: AbortSignal,
  ): Promise<{ toolchainImage: string; repoImage: string; sourceImage: string }> {
    let toolchainImage = spec.toolchainImage;
    if (!(await this.docker.imageExists(toolchainImage))) {
      toolchainImage = (await this.ensureToolchain(spec.baseImage, spec.toolchainImage === spec.baseImage ? null : wheelhouse, signal))
        .image;
    }
    const clone = parseCloneSource(spec.cloneSource);
    let repoImage = spec.repoImage;
    const ensureRepo = async () => {
      if (!(await this.docker.imageExists(repoImage))) repoImage = await this.ensureRepoImage(spec.repo, clone, toolchainImage, signal);
      return repoImage;
    };
    const sourceImage = await this.ensureSourceImage(spec.repo, spec.sha, toolchainImage, ensureRepo, clone, signal);
    return { toolchainImage, repoImage, sourceImage };
  }

  /** Checks the script, builds the commit image (tag `tag`) and verifies it. */
  async buildAndVerify(spec: CommitBuildSpec, tag: string, signal?: AbortSignal): Promise<AttemptRun> {
    const started = Date.now();
    const steps: StepResult[] = [];
    let scan: StoredScan | null = null;
    const done = (image: string | null, lock: EnvironmentLock | null = null): AttemptRun => ({
      steps,
      failure: classifyFailure(steps),
      image,
      durationMs: Date.now() - started,
      lock,
      scan,
    });

    const checked = checkScript(spec.script);
    const syntax = checked.ok ? await bashSyntaxError(checked.script) : null;
    if (!checked.ok || syntax) {
      const detail = checked.ok ? `bash -n: ${syntax}` : checked.problems.join('; ');
      steps.push({
        step: 'script',
        ok: false,
        exitCode: null,
        timedOut: false,
        stdout: '',
        stderr: detail,
        durationMs: Date.now() - started,
        detail,
      });
      return done(null);
    }
    const script = checked.script;
    steps.push({ step: 'script', ok: true, exitCode: 0, timedOut: false, stdout: '', stderr: '', durationMs: Date.now() - started });

    const files: TarEntry[] = [
      { name: SCRIPT_PATH.slice(1), content: script, mode: 0o755 },
      { name: 'perfmine/prepare.sh', content: PREPARE_SCRIPT, mode: 0o755 },
    ];
    if (spec.patch) files.push({ name: 'perfmine/patch.diff', content: spec.patch });
    files.push(...lockFiles(spec.lock ?? null));
    const { repo: imageRepo, tagPart } = splitImageTag(tag);
    const scriptSha = sha256(script);
    const index = await this.#startIndex(spec);
    let build: RunResult;
    try {
      build = await this.docker.run(
        {
          image: spec.sourceImage,
          cmd: index ? ['bash', '-c', `${index.access.prelude} && ${BUILD_COMMAND[2]}`] : [...BUILD_COMMAND],
          env: {
            PERFMINE_SHA: spec.sha,
            ...pythonEnv(spec.pythonVersion),
            PIP_ROOT_USER_ACTION: 'ignore',
            PIP_NO_INPUT: '1',
            PIP_DISABLE_PIP_VERSION_CHECK: '1',
            DEBIAN_FRONTEND: 'noninteractive',
          },
          network: index ? 'none' : this.settings.buildNetwork === 'bridge' ? 'bridge' : 'none',
          ...(index ? { mounts: index.access.mounts } : {}),
          timeoutMs: this.settings.timeoutsMs.build,
          limits: this.settings.limits,
          tailChars: this.settings.tailChars,
          labels: { 'org.perfmine.role': 'build', 'org.perfmine.repo': spec.repo, 'org.perfmine.sha': spec.sha },
          files,
          collect: [CHECKOUT_MARKER],
          commit: {
            repo: imageRepo,
            tag: tagPart,
            changes: [
              `WORKDIR ${REPO_DIR}`,
              'CMD ["/bin/bash"]',
              // An image built with a patch is validate's expert side, not the commit's environment.
              `LABEL org.perfmine.tier=${spec.patch ? 'expert' : 'env'}`,
              `LABEL org.perfmine.repo=${spec.repo}`,
              `LABEL org.perfmine.sha=${spec.sha}`,
              `LABEL org.perfmine.script-sha256=${scriptSha}`,
              ...(spec.patch ? [`LABEL org.perfmine.patch-sha256=${sha256(spec.patch)}`] : []),
            ],
          },
          onOutput: (stream, text) => this.#log.trace({ stream, text }, 'build output'),
        },
        signal,
      );
    } finally {
      await index?.timeMachine.close();
    }
    const served = index?.timeMachine.served() ?? [];
    const indexProblems = index ? describeIndexProblems(index.timeMachine.problems()) : null;
    if (indexProblems) build = { ...build, stderr: `${build.stderr}\n${indexProblems}` };
    const checkedOut = build.files.size > 0;
    if (!checkedOut && !build.timedOut) {
      steps.push(stepOf('checkout', build, false, `checking out ${spec.sha}${spec.patch ? ' and applying the patch' : ''} failed`));
      return done(null);
    }
    const built = build.exitCode === 0 && build.imageId !== null;
    steps.push(stepOf('build', build, built));
    this.#log.debug({ step: 'build', exitCode: build.exitCode, timedOut: build.timedOut, durationMs: build.durationMs }, 'build step');
    if (!built) return done(null);

    steps.push(...(await this.verify(tag, spec, signal)));
    if (steps.some((s) => !s.ok)) return done(tag);
    // the check from outside: the image's files read on this host, nothing run from it
    const scanned = await scanImage({
      docker: this.docker,
      baseImage: spec.baseImage,
      image: tag,
      inventories: this.settings.store ? new ImageInventories(this.settings.store) : null,
      ...(signal ? { signal } : {}),
    });
    steps.push(scanStepResult(scanned));
    scan = scanRecord(scanned);
    this.#log.debug({ step: 'scan', verdict: scanned.verdict, durationMs: scanned.durationMs }, 'outside scan');
    if (scanned.verdict !== 'accepted') return done(tag);
    const installed = await this.installedSet(tag, spec.pythonVersion, signal);
    const lock = lockOf(installed, served, {
      cutoff: index?.timeMachine.cutoff?.toISOString() ?? null,
      upstream: index ? index.timeMachine.upstream : null,
    });
    return done(tag, lock);
  }

  /** The time machine of one build (buildNetwork `index`), at the commit's date; null otherwise. */
  async #startIndex(spec: CommitBuildSpec): Promise<BuildIndex | null> {
    const index = this.settings.buildNetwork === 'index' ? this.settings.index : null;
    if (!index) return null;
    return startBuildIndex(index, {
      commitDate: spec.commitDate ?? null,
      store: this.settings.store,
      keepFiles: this.settings.keepServedFiles ?? false,
      log: this.#log,
    });
  }

  /** The distributions an image's Python sees (perfmine_lock.py `read`), from a container without network. */
  async installedSet(image: string, pythonVersion: string | null, signal?: AbortSignal): Promise<InstalledSet> {
    const out = '/tmp/perfmine-installed.json';
    const r = await this.docker.run(
      {
        image,
        cmd: ['bash', '-c', `"\${PERFMINE_PYTHON:-python3}" ${LOCK_READER_PATH} read --out ${out}`],
        env: pythonEnv(pythonVersion),
        workingDir: '/',
        network: 'none',
        timeoutMs: this.settings.timeoutsMs.import,
        limits: this.settings.limits,
        tailChars: this.settings.tailChars,
        labels: { 'org.perfmine.role': 'lock' },
        collect: [out],
        collectMaxBytes: 256 * 1024 * 1024,
      },
      signal,
    );
    const text = r.files.get(out.slice(out.lastIndexOf('/') + 1))?.toString('utf8');
    if (r.exitCode !== 0 || text === undefined)
      throw new ItemError('lock-unreadable', `reading the distributions of ${image}: ${(r.stderr || r.stdout).trim().slice(-1000)}`);
    return installedSetSchema.parse(JSON.parse(text));
  }

  /**
   * Verification of a commit image in one fresh container without network: tamper check, import,
   * asv discovery, pytest collection, in order, each with its own time limit, stopping at the
   * first failure (verifyContainerFiles). Each step keeps its own exit code, time and output tails.
   */
  async verify(
    image: string,
    spec: Omit<CommitBuildSpec, 'script' | 'sourceImage' | 'baseImage'>,
    signal?: AbortSignal,
  ): Promise<StepResult[]> {
    const limits: Record<string, number> = {
      history: this.settings.timeoutsMs.tamper,
      tamper: this.settings.timeoutsMs.tamper,
      import: this.settings.timeoutsMs.import,
      asv: this.settings.timeoutsMs.asv,
      pytest: this.settings.timeoutsMs.pytest,
    };
    const planned = verifyCommands({
      sha: spec.sha,
      importName: spec.importName,
      asvConfigPath: spec.asvConfigPath,
      asvDiscover: this.settings.asvDiscover,
      patched: Boolean(spec.patch),
      pytestArgs: spec.pytestArgs ?? [],
    }).map((command) => ({ command, limitMs: limits[command.step] ?? this.settings.timeoutsMs.import }));
    const files = [
      ...planned.flatMap((p) => p.command.files ?? []),
      ...(spec.patch ? [{ name: 'perfmine-verify/patch.diff', content: spec.patch }] : []),
      ...verifyContainerFiles(planned, this.settings.tailChars * 4),
    ];
    const r = await this.docker.run(
      {
        image,
        cmd: ['bash', `${VERIFY_RUN_DIR}/driver.sh`],
        env: pythonEnv(spec.pythonVersion),
        workingDir: '/',
        network: spec.verifyNetwork ? 'bridge' : 'none',
        timeoutMs: verifyContainerTimeoutMs(planned),
        limits: this.settings.limits,
        tailChars: this.settings.tailChars,
        labels: { 'org.perfmine.role': 'verify', 'org.perfmine.repo': spec.repo, 'org.perfmine.sha': spec.sha },
        files,
        collect: [VERIFY_RUN_DIR],
      },
      signal,
    );
    const runs = readVerifyRun(r.files, planned, this.settings.tailChars);
    const steps: StepResult[] = [];
    let elapsed = 0;
    for (const [i, { command: c }] of planned.entries()) {
      const run = runs[i];
      if (!run) {
        // the container ended before this step did: killed at its time limit or for its disk (no
        // exit code then), or the driver failed
        steps.push({ ...stepOf(c.step, r, false), durationMs: Math.max(0, r.durationMs - elapsed) });
        this.#log.debug({ step: c.step, ok: false, exitCode: r.exitCode, timedOut: r.timedOut }, 'verification step');
        break;
      }
      elapsed += run.durationMs;
      const ok = !run.timedOut && run.exitCode !== null && c.okExitCodes.includes(run.exitCode);
      let detail: string | undefined;
      if (!ok && c.step === 'history') {
        const leaks = historyLeaks(run.stdout);
        detail =
          leaks.length > 0
            ? `history-leak: /repo holds more than the commit's history: ${leaks.slice(0, 3).join('; ')}${leaks.length > 3 ? ` (and ${leaks.length - 3} more)` : ''}`
            : `history check failed: ${(run.stderr.trim() || run.stdout.trim()).slice(0, 300)}`;
      }
      if (!ok && c.step === 'tamper') {
        const changed = categorizeChanged(tamperedPaths(run.stdout), {
          asvConfigPath: spec.asvConfigPath,
          benchmarkDir: spec.layout?.benchmarkDir ?? null,
          testDirs: spec.layout?.testDirs ?? [],
        });
        detail =
          changed.length > 0
            ? `the build script changed tracked files: ${changed.map((x) => `${x.path} (${x.kind})`).join(', ')}`
            : `tamper check failed: ${(run.stderr.trim() || run.stdout.trim()).slice(0, 300)}`;
      }
      steps.push({ step: c.step, ok, ...run, ...(detail === undefined ? {} : { detail }) });
      this.#log.debug(
        { step: c.step, ok, exitCode: run.exitCode, timedOut: run.timedOut, durationMs: run.durationMs },
        'verification step',
      );
      if (!ok) break;
    }
    return steps;
  }

  /**
   * A task folder's sealed history read out of a commit's source tier (`seal.sh bundle`): the
   * same bytes `exportSealedHistory` makes from a local clone (the GitHub source has none).
   */
  async sealedHistory(sourceImage: string, signal?: AbortSignal): Promise<Map<string, Buffer>> {
    const out = '/tmp/perfmine-source';
    const r = await this.docker.run(
      {
        image: sourceImage,
        cmd: ['bash', SEAL_PATH, 'bundle', out],
        network: 'none',
        timeoutMs: this.settings.timeoutsMs.repoImage,
        limits: this.settings.limits,
        tailChars: this.settings.tailChars,
        labels: { 'org.perfmine.role': 'seal-bundle' },
        collect: [out],
        collectMaxBytes: 16 * 1024 ** 3,
      },
      signal,
    );
    if (r.exitCode !== 0)
      throw new ItemError('seal-failed', `bundling the sealed history of ${sourceImage}: ${r.stderr.trim().slice(-2000)}`);
    if (!r.files.has(`${out.slice(out.lastIndexOf('/') + 1)}/repo.bundle`))
      throw new ItemError('seal-failed', `bundling the sealed history of ${sourceImage}: no repo.bundle came out of the container`);
    const base = out.slice(out.lastIndexOf('/') + 1);
    const files = new Map<string, Buffer>();
    for (const [path, data] of [...r.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (path.startsWith(`${base}/`) && !path.endsWith('/')) files.set(`${TASK_SOURCE_DIR}/${path.slice(base.length + 1)}`, data);
    }
    return files;
  }

  /** Tags a verified attempt image with its final name and drops the attempt tag. */
  async promote(attemptTag: string, finalTag: string): Promise<void> {
    await this.docker.tagImage(attemptTag, finalTag);
    await this.docker.removeImage(attemptTag);
  }

  async discard(tag: string): Promise<void> {
    await this.docker.removeImage(tag);
  }

  /**
   * Untags older repository images of a repository (their layers stay while environments built
   * on them exist), so that one clone per repository is kept. An older clone another live
   * perfmine process built is left to it (or to a later run): two runs on one repository at
   * once (a cron run and a rerun of one stage) would otherwise untag each other's clone between
   * building it and sealing a commit from it.
   */
  async pruneRepoImages(repo: string, keep: string): Promise<void> {
    const prefix = `perfmine/repo-${imageSlug(repo)}:`;
    for (const image of await this.docker.images()) {
      if (!this.docker.mayUntag(image)) continue;
      for (const t of image.RepoTags ?? []) if (t.startsWith(prefix) && t !== keep) await this.docker.removeImage(t);
    }
  }
}

function splitImageTag(ref: string): { repo: string; tagPart: string } {
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/') ? { repo: ref.slice(0, colon), tagPart: ref.slice(colon + 1) } : { repo: ref, tagPart: 'latest' };
}

/**
 * A clone that lacks objects its history reaches (a partial clone, or a snapshot without its
 * largest blobs) cannot be bundled: said as such, with the command that lists what is missing.
 */
function incompleteClone(error: unknown, clonePath: string): unknown {
  if (!(error instanceof ItemError) || !/unable to read [0-9a-f]{40}|missing (blob|tree|commit)/.test(error.message)) return error;
  const object = /unable to read ([0-9a-f]{40})/.exec(error.message)?.[1];
  return new ItemError(
    'git-failed',
    `the clone at ${clonePath} lacks objects its history reaches${object ? ` (${object}, and perhaps more)` : ''}: a partial clone or an incomplete snapshot cannot be bundled into the repository tier`,
    {
      fix: `list them with \`git -C ${clonePath} fsck --connectivity-only\`; fetch them (\`git -C ${clonePath} fetch --refetch origin\`) or use a complete clone`,
      cause: error,
    },
  );
}

async function git(cwd: string, args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await execFileP('git', ['-C', cwd, ...args], { maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' });
    return stdout;
  } catch (error) {
    const e = error as { code?: number | string; stderr?: string; message: string };
    if (typeof e.code === 'number') throw new ItemError('git-failed', `git ${args[0]} in ${cwd}: ${(e.stderr ?? e.message).trim()}`);
    throw new OutsideServiceError('git', 'git-unavailable', `git: ${e.message}`, { cause: error });
  }
}

/**
 * The submodule repositories of a local clone (`.git/modules/NAME`, NAME possibly with slashes):
 * what the repository tier carries so that source tiers can populate submodules without network.
 */
async function moduleGitDirs(clonePath: string): Promise<{ name: string; gitDir: string }[]> {
  const modulesDir = (await git(clonePath, ['rev-parse', '--path-format=absolute', '--git-path', 'modules'])).trim();
  const found: { name: string; gitDir: string }[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    if (entries.some((e) => e.name === 'HEAD' && e.isFile()) && entries.some((e) => e.name === 'objects')) {
      found.push({ name: prefix, gitDir: dir });
      return;
    }
    for (const e of entries) if (e.isDirectory()) await walk(join(dir, e.name), prefix ? `${prefix}/${e.name}` : e.name);
  };
  await walk(modulesDir, '');
  return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The lock's files for a build that installs it first (prepare.sh installs requirements.lock; the build script runs with constraints.txt). */
function lockFiles(lock: EnvironmentLock | null): TarEntry[] {
  if (!lock) return [];
  const files: TarEntry[] = [];
  if (lock.distributions.some((d) => d.source === 'index'))
    files.push({ name: 'perfmine/requirements.lock', content: requirementsLock(lock, 'the environment perfmine verified') });
  const constraints = buildConstraints(lock);
  if (constraints.trim()) files.push({ name: 'perfmine/constraints.txt', content: constraints });
  return files;
}

/** What the time machine had to say about a build, as lines its log ends with (null: nothing). */
function describeIndexProblems(problems: readonly IndexProblem[]): string | null {
  const worth = problems.filter((p) => p.reason !== 'upload-time-missing' || p.refused);
  if (worth.length === 0) return null;
  return worth
    .slice(0, 20)
    .map(
      (p) =>
        `perfmine index time machine: ${p.reason}${p.project ? ` (${p.project}${p.filename ? ` ${p.filename}` : ''})` : ''}: ${p.message}`,
    )
    .join('\n');
}
