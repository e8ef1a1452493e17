import type { AsvLayout, AsvRunSettings, InvocationOutput } from './protocol/asv-invocation.js';
import type { ExpertBuildReading } from './protocol/expert-image.js';
import type { PlannedInvocation } from './protocol/schedule.js';
import type { PytestRun } from './correctness/tests.js';
import type { SynthesizeOutput } from '../../pipeline/concepts/records/synthesize-output.js';
import type { HarnessWorker, Side } from './harness/interleave.js';

/**
 * The one seam where validate uses containers. The stage's logic (validate-candidate.ts) talks
 * only to this interface; docker-runner.ts implements it against the Docker engine, tests
 * implement it with canned outputs. Every method runs in fresh containers (or builds an image)
 * and reports what happened; an engine that does not answer is an OutsideServiceError.
 */

/** What the candidate's containers are made from: synthesize's verified environment of its base commit. */
export interface CandidateEnvironment {
  /** `owner/name#N`, for labels. */
  readonly key: string;
  readonly number: number;
  /** The verified image of the base commit (synthesize's imageTag). */
  readonly baseImage: string;
  /**
   * How that image was made (script, tiers, clone source, Python, asv config, import name): the
   * expert side is built the same way, with the patch.
   */
  readonly synthesized: SynthesizeOutput;
  /** Where the images hold the checkout (synthesize's layout). */
  readonly repoDir: string;
  /** The interpreter that runs pytest and the snapshot helper (the one synthesize chose). */
  readonly python: string;
  /** Environment variables of every container (threads pinned). */
  readonly env: Readonly<Record<string, string>>;
  /** Whether measurement, tests and snapshot may use the network (per-repository config). */
  readonly network: boolean;
  /**
   * The repository's own pytest arguments (`repositories."owner/name".pytestArgs`): the test runs
   * add them after `validate.pytestArgs`, and the expert build's verification takes them.
   */
  readonly pytestArgs?: readonly string[];
}

export interface ExpertBuildOutcome {
  readonly reading: ExpertBuildReading;
  /** The expert image's tag when it was built. */
  readonly image: string | null;
  readonly durationMs: number;
}

export interface InvocationRun {
  readonly output: InvocationOutput;
  /** The container's own exit (null when killed at the time limit). */
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
}

export interface TestsRun extends PytestRun {
  readonly durationMs: number;
}

export interface SnapshotRun {
  /** The helper's JSON, when it wrote one. */
  readonly json: string | null;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly log: string;
  readonly durationMs: number;
}

export interface SnapshotRequest {
  readonly configPath: string;
  readonly bench: string | null;
  readonly perCallSeconds: number;
  readonly timeLimitSeconds: number;
}

/** One harness worker of a candidate (engine perfmine). */
export interface HarnessWorkerSpec {
  readonly side: Side;
  /** The asv config, relative to the checkout. */
  readonly configPath: string;
  readonly bench: string | null;
  /** CPUs to pin the worker to (null: none). */
  readonly cpuset: string | null;
  /** PYTHONHASHSEED of the worker. */
  readonly hashSeed: string;
  /** How long the worker may take to import the suite. */
  readonly startTimeoutMs: number;
  /** The worker is killed after this long whatever it is doing. */
  readonly maxLifetimeMs: number;
}

export interface MeasurementRunner {
  /** Called once before a stage's items: removes what a crashed run left behind (transient expert images, containers). */
  prepare?(): Promise<void>;
  /**
   * Builds and verifies the expert image as synthesize builds environments: the base commit
   * checked out with the patch applied, the build script rerun. The image is transient until
   * `keep` or `release`.
   */
  buildExpert(env: CandidateEnvironment, patch: string, timeoutMs: number, signal?: AbortSignal): Promise<ExpertBuildOutcome>;
  /** One asv invocation in a fresh container of `image`. */
  runInvocation(
    env: CandidateEnvironment,
    image: string,
    invocation: PlannedInvocation,
    layout: AsvLayout,
    settings: AsvRunSettings,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<InvocationRun>;
  /** A warm harness worker in a fresh container of `image` (engine perfmine); closed by the caller. */
  openHarnessWorker(env: CandidateEnvironment, image: string, spec: HarnessWorkerSpec, signal?: AbortSignal): Promise<HarnessWorker>;
  /** CPUs of the machine the containers run on (for pinning). */
  hostCpus(): Promise<number>;
  /**
   * What a harness worker of `image` runs in, as far as this runner makes it: the image's id in
   * the engine (not its tag: a rebuilt image has another), the containers' limits and the harness's
   * files. Results remembered under it (fingerprints that failed) hold while it does. Null when it
   * cannot be told (the image is gone, the engine does not answer): nothing is remembered then.
   */
  workerIdentity(env: CandidateEnvironment, image: string, signal?: AbortSignal): Promise<string | null>;
  /** Paths (relative to the checkout) that differ between a commit and the base image's checkout; null when git cannot tell (the commit is not in the clone). */
  changedFiles(env: CandidateEnvironment, fromSha: string, signal?: AbortSignal): Promise<ReadonlySet<string> | null>;
  /** pytest in a fresh container of `image`, under a time limit. */
  runTests(
    env: CandidateEnvironment,
    image: string,
    options: { args: readonly string[]; timeLimitSeconds: number },
    signal?: AbortSignal,
  ): Promise<TestsRun>;
  /** The snapshot helper's record on `image` (the base). */
  recordSnapshot(env: CandidateEnvironment, image: string, request: SnapshotRequest, signal?: AbortSignal): Promise<SnapshotRun>;
  /** The snapshot helper's compare on `image` (the expert) against the base's record. */
  compareSnapshot(
    env: CandidateEnvironment,
    image: string,
    baseline: string,
    request: SnapshotRequest,
    signal?: AbortSignal,
  ): Promise<SnapshotRun>;
  /** Removes images this runner built for the candidate. */
  release(images: readonly string[]): Promise<void>;
  /** Keeps the expert image under its lasting name (`validate.keepExpertImages`); returns that name. */
  keep(env: CandidateEnvironment, image: string): Promise<string>;
}
