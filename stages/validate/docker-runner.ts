import { readFileSync } from 'node:fs';
import { ItemError } from '../../pipeline/errors.js';
import { buildImage, removeImage } from '../../pipeline/services/docker-build.js';
import type { ContainerLimits, DockerService, RunResult } from '../../pipeline/services/docker.js';
import { SNAPSHOT_SCRIPT } from './correctness/snapshot.js';
import { asvInvocationScript, readInvocationOutput } from './protocol/asv-invocation.js';
import { MAX_INLINE_SCRIPT, writeFilesScript } from './protocol/container-files.js';
import { expertDockerfile, readExpertBuild } from './protocol/expert-image.js';
import { framedInt, parseFramedOutput } from './protocol/framed-output.js';
import { pytestScript } from './protocol/pytest-script.js';
import { snapshotScript } from './protocol/snapshot-script.js';
import type { CandidateEnvironment, MeasurementRunner, SnapshotRequest, SnapshotRun } from './runner-port.js';

/**
 * The measurement runner against the Docker engine: the foundation's DockerService.run for every
 * container (fresh, limited, unprivileged, labelled, network off unless the repository allows
 * it), and derived images built from in-memory contexts (pipeline/services/docker-build.ts).
 * Files come back framed on stdout, so nothing is mounted.
 */

/** Output kept from a container whose stdout carries files (results, JUnit, snapshot JSON). */
const FILE_OUTPUT_CHARS = 64 * 1024 * 1024;

/** A Docker tag for a candidate: `owner__name-N`, lowercase. */
export function candidateTag(key: string): string {
  return key
    .toLowerCase()
    .replace('/', '__')
    .replace('#', '-')
    .replace(/[^a-z0-9_.-]/g, '_')
    .slice(0, 120);
}

export interface DockerRunnerOptions {
  readonly docker: DockerService;
  readonly limits: ContainerLimits;
  /** The run's label value (leftovers of a crashed run are found by it). */
  readonly runLabel: string;
}

export class DockerMeasurementRunner implements MeasurementRunner {
  readonly #docker: DockerService;
  readonly #limits: ContainerLimits;
  readonly #runLabel: string;

  constructor(options: DockerRunnerOptions) {
    this.#docker = options.docker;
    this.#limits = options.limits;
    this.#runLabel = options.runLabel;
  }

  async #bash(env: CandidateEnvironment, image: string, script: string, timeoutMs: number, role: string, signal?: AbortSignal): Promise<RunResult> {
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
      },
      signal,
    );
  }

  async buildExpert(env: CandidateEnvironment, patch: string, timeoutMs: number, signal?: AbortSignal) {
    const image = `perfmine/expert:${candidateTag(env.key)}`;
    const result = await buildImage(
      this.#docker,
      {
        tag: image,
        dockerfile: expertDockerfile({ baseImage: env.baseImage, repoDir: env.repoDir }),
        files: { 'perfmine/expert.patch': patch, 'perfmine/docker_build.sh': env.buildScript, 'perfmine/snapshot.py': readFileSync(SNAPSHOT_SCRIPT, 'utf8') },
        labels: { 'org.perfmine.item': env.key },
        timeoutMs,
        tailChars: 20_000,
      },
      this.#runLabel,
      signal,
    );
    const reading = readExpertBuild(result);
    return { reading, image: reading.ok ? image : null, durationMs: result.durationMs };
  }

  async runInvocation(...[env, image, invocation, layout, settings, timeoutMs, signal]: Parameters<MeasurementRunner['runInvocation']>) {
    const result = await this.#bash(env, image, asvInvocationScript(layout, settings), timeoutMs, `asv-${invocation.role}`, signal);
    return { output: readInvocationOutput(result.stdout), exitCode: result.exitCode, timedOut: result.timedOut, durationMs: result.durationMs };
  }

  async runTests(env: CandidateEnvironment, image: string, options: { python: string; args: readonly string[]; timeLimitSeconds: number }, signal?: AbortSignal) {
    const script = pytestScript({ repoDir: env.repoDir, python: options.python, timeLimitSeconds: options.timeLimitSeconds, args: options.args });
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
      python: request.python,
      configPath: request.configPath,
      bench: request.bench,
      perCallSeconds: request.perCallSeconds,
      timeLimitSeconds: request.timeLimitSeconds,
    };
  }

  async recordSnapshot(env: CandidateEnvironment, image: string, request: SnapshotRequest, signal?: AbortSignal) {
    const script = snapshotScript(this.#settings(env, request), {
      script: '/tmp/perfmine/snapshot.py',
      mode: 'record',
      prelude: writeFilesScript({ '/tmp/perfmine/snapshot.py': readFileSync(SNAPSHOT_SCRIPT, 'utf8') }),
    });
    if (script.length > MAX_INLINE_SCRIPT) throw new ItemError('script-too-large', `the snapshot script is ${script.length} bytes, over ${MAX_INLINE_SCRIPT}`);
    const result = await this.#bash(env, image, script, (request.timeLimitSeconds + 60) * 1000, 'snapshot-record', signal);
    return this.#snapshotResult(result);
  }

  async compareSnapshot(env: CandidateEnvironment, image: string, baseline: string, request: SnapshotRequest, signal?: AbortSignal) {
    // the base's record may be large: it travels in a derived image, not in the command
    const derived = `perfmine/snapshot-compare:${candidateTag(env.key)}`;
    const built = await buildImage(
      this.#docker,
      { tag: derived, dockerfile: `FROM ${image}\nCOPY perfmine/ /perfmine/\n`, files: { 'perfmine/baseline.json': baseline }, network: 'none', timeoutMs: 300_000 },
      this.#runLabel,
      signal,
    );
    if (!built.ok) throw new ItemError('snapshot-image-failed', `cannot add the base snapshot to ${image}: ${built.error ?? 'build failed'}`);
    try {
      const script = snapshotScript(this.#settings(env, request), { script: '/perfmine/snapshot.py', mode: 'compare', baseline: '/perfmine/baseline.json' });
      return this.#snapshotResult(await this.#bash(env, derived, script, (request.timeLimitSeconds + 60) * 1000, 'snapshot-compare', signal));
    } finally {
      await removeImage(this.#docker, derived);
    }
  }

  async release(images: readonly string[]) {
    for (const image of images) await removeImage(this.#docker, image);
  }
}
