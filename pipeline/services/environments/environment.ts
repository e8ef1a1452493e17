import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../../config/schema.js';
import { ConfigError, ItemError, OutsideServiceError } from '../../errors.js';
import { sha256 } from '../../hash.js';
import type { Logger } from '../../logging.js';
import type { Source } from '../../scope.js';
import { containerLimits, type ContainerLimits, type DockerService, type RunResult } from '../docker.js';
import type { TarEntry } from '../tar.js';
import type { NewAttempt } from '../../../cache/build-scripts.js';
import { classifyFailure, describeFailure, type Failure, type StepResult } from './failure.js';
import { imageSlug, repoImageTag, toolchainTag } from './image-names.js';
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
  readonly buildNetwork: 'bridge' | 'none';
  /** How verification discovers the benchmarks: the harness (engine perfmine), or asv (`check`, `just-discover`). */
  readonly asvDiscover: BenchmarkDiscovery;
}

export function buildSettings(config: Config): BuildSettings {
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
    asvDiscover: discoveryOf(config),
  };
}

/** How environments are verified to discover their benchmarks: with the engine validate measures with. */
export function discoveryOf(config: Config): BenchmarkDiscovery {
  return config.validate.engine === 'perfmine' ? 'harness' : config.synthesize.asv.discover;
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
  /** The repository tier to build from. */
  readonly repoImage: string;
  readonly importName: string | null;
  readonly asvConfigPath: string | null;
  /** `X.Y`: the build and verification use `pythonX.Y` (PERFMINE_PYTHON). */
  readonly pythonVersion: string | null;
  /** A unified diff applied after the checkout, before the script (validate's expert side). */
  readonly patch?: string | null;
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
}

/** What the attempt table records of a run: its outcome, the failing step and its output tails, every step. */
export function attemptRecordOf(
  run: AttemptRun,
): Pick<NewAttempt, 'outcome' | 'failingStep' | 'failureKind' | 'failure' | 'stdoutTail' | 'stderrTail' | 'steps' | 'durationMs'> {
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
    const built = await this.docker.buildImage(
      {
        tag,
        context,
        labels: { 'org.perfmine.tier': 'toolchain' },
        timeoutMs: this.settings.timeoutsMs.repoImage,
        limits: this.settings.limits,
        tailChars: this.settings.tailChars,
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
      const built = await this.docker.buildImage(
        {
          tag,
          context: [
            { name: 'Dockerfile', content: `FROM ${toolchainImage}\nRUN git clone -q --no-checkout ${clone.url} /repo\n${finish}` },
          ],
          labels,
          network: 'default',
          timeoutMs: this.settings.timeoutsMs.repoImage,
          limits: this.settings.limits,
          tailChars: this.settings.tailChars,
        },
        signal,
      );
      if (!built.ok)
        throw new OutsideServiceError('git', 'clone-failed', `cloning ${clone.url} failed: ${built.error}`, { retryable: true });
      await this.pruneRepoImages(repo, tag);
      return tag;
    }
    const refs = await git(clone.path, ['show-ref', '--head']);
    const tag = repoImageTag(repo, `${toolchain.id}\n${refs}`);
    if (await this.docker.imageExists(tag)) return tag;
    const dir = await mkdtemp(join(tmpdir(), 'perfmine-bundle-'));
    try {
      const bundle = join(dir, 'repo.bundle');
      await git(clone.path, ['bundle', 'create', bundle, '--all']);
      const built = await this.docker.buildImage(
        {
          tag,
          context: [
            {
              name: 'Dockerfile',
              content: `FROM ${toolchainImage}\nCOPY repo.bundle /tmp/repo.bundle\nRUN git clone -q --no-checkout /tmp/repo.bundle /repo && rm /tmp/repo.bundle && git -C /repo remote remove origin\n${finish}`,
            },
            { name: 'repo.bundle', content: { file: bundle } },
          ],
          labels,
          timeoutMs: this.settings.timeoutsMs.repoImage,
          limits: this.settings.limits,
          tailChars: this.settings.tailChars,
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
   * The toolchain and repository tiers an environment was built on, as recorded (synthesize's
   * output, the build-script store), rebuilt from the base image and the clone source when they
   * are gone (a newer clone untags older repository images).
   */
  async ensureTiers(
    spec: {
      readonly repo: string;
      readonly baseImage: string;
      readonly toolchainImage: string;
      readonly repoImage: string;
      readonly cloneSource: string;
    },
    wheelhouse: string | null,
    signal?: AbortSignal,
  ): Promise<{ toolchainImage: string; repoImage: string }> {
    let toolchainImage = spec.toolchainImage;
    if (!(await this.docker.imageExists(toolchainImage))) {
      toolchainImage = (await this.ensureToolchain(spec.baseImage, spec.toolchainImage === spec.baseImage ? null : wheelhouse, signal))
        .image;
    }
    const repoImage = (await this.docker.imageExists(spec.repoImage))
      ? spec.repoImage
      : await this.ensureRepoImage(spec.repo, parseCloneSource(spec.cloneSource), toolchainImage, signal);
    return { toolchainImage, repoImage };
  }

  /** Checks the script, builds the commit image (tag `tag`) and verifies it. */
  async buildAndVerify(spec: CommitBuildSpec, tag: string, signal?: AbortSignal): Promise<AttemptRun> {
    const started = Date.now();
    const steps: StepResult[] = [];
    const done = (image: string | null): AttemptRun => ({
      steps,
      failure: classifyFailure(steps),
      image,
      durationMs: Date.now() - started,
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
    const { repo: imageRepo, tagPart } = splitImageTag(tag);
    const scriptSha = sha256(script);
    const build = await this.docker.run(
      {
        image: spec.repoImage,
        cmd: [...BUILD_COMMAND],
        env: {
          PERFMINE_SHA: spec.sha,
          ...pythonEnv(spec.pythonVersion),
          PIP_ROOT_USER_ACTION: 'ignore',
          PIP_NO_INPUT: '1',
          PIP_DISABLE_PIP_VERSION_CHECK: '1',
          DEBIAN_FRONTEND: 'noninteractive',
        },
        network: this.settings.buildNetwork,
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
    return done(tag);
  }

  /**
   * Verification of a commit image in one fresh container without network: tamper check, import,
   * asv discovery, pytest collection, in order, each with its own time limit, stopping at the
   * first failure (verifyContainerFiles). Each step keeps its own exit code, time and output tails.
   */
  async verify(image: string, spec: Omit<CommitBuildSpec, 'script' | 'repoImage'>, signal?: AbortSignal): Promise<StepResult[]> {
    const limits: Record<string, number> = {
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
        network: 'none',
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
   * on them exist), so that one clone per repository is kept.
   */
  async pruneRepoImages(repo: string, keep: string): Promise<void> {
    const prefix = `perfmine/repo-${imageSlug(repo)}:`;
    for (const image of await this.docker.images()) {
      for (const t of image.RepoTags ?? []) if (t.startsWith(prefix) && t !== keep) await this.docker.removeImage(t);
    }
  }
}

function splitImageTag(ref: string): { repo: string; tagPart: string } {
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/') ? { repo: ref.slice(0, colon), tagPart: ref.slice(colon + 1) } : { repo: ref, tagPart: 'latest' };
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
