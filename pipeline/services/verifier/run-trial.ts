import { createHash } from 'node:crypto';
import { ItemError } from '../../errors.js';
import type { Logger } from '../../logging.js';
import type { ContainerLimits, DockerService } from '../docker.js';
import type { TarEntry } from '../tar.js';
import { contentBytes, contentDigest } from './file-content.js';
import { harborEnvironmentFiles, harborTestsFiles, type HarborOptions, type VerifiableTask } from './verifier-folder.js';
import { parseTrialOutput, TrialOutputError, type TrialOutput } from './trial-output.js';
import { COLLECTED, NOT_APPLIED, trialEntries, trialScript } from './trial-script.js';
import { isLoopbackUrl } from '../loopback.js';

/**
 * A verifier's run of one change on one task, in the task's Harbor environment on the real engine
 * (trial-script.ts): `perfmine score` runs every prediction (and the expert's patch) this way, and
 * `perfmine replay` the expert's patch, so that the rules of the Harbor verifier are the rules of
 * every reward and every replay perfmine gives. The environment image is built once per content
 * (its tag carries the digest of its files) and reused.
 */

export interface TrialSpec {
  readonly docker: DockerService;
  readonly task: VerifiableTask;
  readonly harbor: HarborOptions;
  /** The change, a unified diff against the base commit ('' for none). */
  readonly patch: string;
  readonly limits: ContainerLimits;
  /** PERFMINE_VERIFY_ROUNDS (the task's protocol when absent). */
  readonly rounds?: number;
  /** The verifier's time limit (Harbor's [verifier] timeout_sec). */
  readonly timeoutMs: number;
  readonly buildTimeoutMs: number;
  /** PIP_INDEX_URL for the environment's build (a loopback index: built on the host's network). */
  readonly indexUrl?: string | null;
  /** An environment image already built (replay builds and scans its own). */
  readonly image?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly log: Logger;
  readonly signal?: AbortSignal;
}

export interface Trial {
  /** false: the change does not apply to the base commit (nothing verified). */
  readonly applied: boolean;
  readonly output: TrialOutput | null;
  readonly image: string;
  readonly durationMs: number;
  /** The run hit its time limit (reward.json is then test.sh's provisional failure). */
  readonly timedOut: boolean;
}

/** The tag of a task's environment image: its instance and the digest of its files. */
export function environmentTag(task: VerifiableTask): string {
  const files = harborEnvironmentFiles(task);
  const hash = createHash('sha256');
  for (const path of [...files.keys()].sort())
    hash.update(`${path}\0${files.get(path)!.mode}\0${contentDigest(files.get(path)!.content)}\0`);
  const slug = task.row.instance_id.toLowerCase().replace(/[^a-z0-9_.-]+/g, '-');
  return `perfmine/trial-${slug}:${hash.digest('hex').slice(0, 16)}`;
}

/** The task's environment image (Harbor's environment/), built unless it exists. */
export async function environmentImage(spec: Omit<TrialSpec, 'patch' | 'rounds' | 'timeoutMs' | 'image'>): Promise<string> {
  const tag = environmentTag(spec.task);
  if (await spec.docker.imageExists(tag)) return tag;
  const context: TarEntry[] = [...harborEnvironmentFiles(spec.task)].map(([name, file]) => {
    const bytes = contentBytes(file.content, name);
    return { name, content: typeof bytes === 'string' ? bytes : Buffer.from(bytes), mode: file.mode };
  });
  spec.log.info({ task: spec.task.row.instance_id, tag }, "building the task's environment for the verifier");
  const index = spec.indexUrl ?? null;
  const built = await spec.docker.buildImage(
    {
      context,
      tag,
      buildArgs: index ? { PIP_INDEX_URL: index } : {},
      network: index && isLoopbackUrl(index) ? 'host' : 'default',
      timeoutMs: spec.buildTimeoutMs,
      limits: spec.limits,
      labels: { 'org.perfmine.role': 'trial', ...spec.labels },
      tailChars: 16_000,
    },
    spec.signal,
  );
  if (!built.ok)
    throw new ItemError(
      'environment-build-failed',
      `the task's environment does not build: ${built.error ?? ''}\n${built.log.slice(-3000)}`,
    );
  return tag;
}

/** Runs the verifier on the change in the task's environment; an ItemError when the run itself breaks. */
export async function runTrial(spec: TrialSpec): Promise<Trial> {
  const image = spec.image ?? (await environmentImage(spec));
  const tests = harborTestsFiles(spec.task, spec.harbor);
  const started = Date.now();
  spec.log.info({ task: spec.task.row.instance_id, image, patchBytes: spec.patch.length, rounds: spec.rounds }, 'verifier: running');
  const result = await spec.docker.run(
    {
      image,
      cmd: ['bash', '-c', trialScript(spec.rounds ? { rounds: spec.rounds } : {})],
      network: 'none',
      timeoutMs: spec.timeoutMs,
      limits: spec.limits,
      labels: { 'org.perfmine.role': 'trial', ...spec.labels },
      files: trialEntries(tests, spec.patch),
      collect: COLLECTED,
      collectMaxBytes: 64 * 1024 * 1024,
      tailChars: 16_000,
    },
    spec.signal,
  );
  const durationMs = Date.now() - started;
  if (result.exitCode === NOT_APPLIED) return { applied: false, output: null, image, durationMs, timedOut: false };
  if (result.exitCode !== 0 && !result.timedOut)
    throw new ItemError(
      'verifier-failed',
      `the verifier's run exited ${result.exitCode}: ${result.stderr.slice(-2000)}${result.stdout.slice(-2000)}`,
    );
  try {
    return { applied: true, output: parseTrialOutput(result.files), image, durationMs, timedOut: result.timedOut };
  } catch (error) {
    if (error instanceof TrialOutputError) throw new ItemError('verifier-failed', error.message);
    throw error;
  }
}
