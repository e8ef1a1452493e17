import { readFileSync } from 'node:fs';
import type { BlobRef } from '../../cache/blobs.js';
import {
  harborTimeouts,
  protocolRounds,
  type HarborOptions,
  type VerifiableTask,
} from '../../pipeline/services/verifier/verifier-folder.js';
import { harborTaskInputs } from '../../pipeline/services/verifier/task-inputs.js';
import type { Logger } from '../../pipeline/logging.js';
import type { ContainerLimits, DockerService } from '../../pipeline/services/docker.js';
import { runTrial } from '../../pipeline/services/verifier/run-trial.js';
import type { TrialWorkload } from '../../pipeline/services/verifier/trial-output.js';
import type { ReplayedWorkload } from './rule.js';
import type { TaskFolder } from './task-folder.js';
import { isBinaryTaskPath } from '../../pipeline/concepts/vendored-wheels.js';

/**
 * A replay's measurement of the expert's patch by the Harbor verifier (issue 35: the rules of the
 * task's verifier hold for its replay): the oracle's trial in the environment built from the
 * folder (the expert's patch applied as the agent, tests/test.sh as root), whose working side is
 * the expert's patch, checked over channels, looked at by the hack detector and measured with each
 * side counted from outside; its per-workload verdicts, as the replication rule reads them.
 */

export interface ReplayMeasurement {
  /** Per workload the verifier measured: the expert's patch (its working side) against the base. */
  readonly workloads: ReadonlyMap<string, ReplayedWorkload>;
  readonly problem: string | null;
  readonly seed: number | null;
  readonly rounds: number | null;
  readonly durationMs: number;
  /** The check the expert's patch failed (hack included): the task does not replicate under its own verifier. */
  readonly failure: { readonly check: string; readonly message: string } | null;
  /** The verifier could not verify (its own problem). */
  readonly error: string | null;
  readonly reward: number | null;
  readonly findings: readonly string[];
}

/** A task folder as the verifier runs it: its text files, and its bundles and locked files (`wheels/`) read from disk when needed. */
export function verifiableFolder(folder: TaskFolder): VerifiableTask {
  const files: Record<string, string> = {};
  const blobs: Record<string, BlobRef> = {};
  for (const f of folder.files) {
    if (isBinaryTaskPath(f.path)) {
      const size = readFileSync(f.absolute).length;
      blobs[f.path] = { sha256: f.sha256, size, read: () => readFileSync(f.absolute) };
    } else files[f.path] = readFileSync(f.absolute, 'utf8');
  }
  return { row: { instance_id: folder.instanceId, repo: folder.repo }, files, blobs };
}

/**
 * Why the verifier's hack checks judged a workload memoised, with the numbers they read: in a
 * replay the working side is the expert's own patch, so such a verdict is the checks misfiring
 * on this task, and whoever reads the replay needs those numbers.
 */
export function memoDetail(memo: TrialWorkload['memo']): string | null {
  if (!memo) return null;
  const { memoised: _memoised, why, ...numbers } = memo;
  const rounded = JSON.stringify(numbers, (_key, value: unknown) => (typeof value === 'number' ? Number(value.toPrecision(3)) : value));
  return `${why ?? 'no reason given'}; ${rounded}`;
}

function replayed(w: TrialWorkload): ReplayedWorkload {
  const change = (['improved', 'worsened', 'unchanged', 'incomparable'] as const).find((c) => c === w.verdict) ?? 'incomparable';
  return {
    change,
    reason: w.reason ?? null,
    detail: w.reason === 'memoised' ? memoDetail(w.memo) : null,
    medianLog: w.median_log ?? (w.speedup ? -Math.log(w.speedup) : null),
    standardError: w.standard_error ?? null,
    df: w.df ?? 0,
    mds: w.mds ?? null,
    pValue: w.p_value ?? null,
    usablePairs: w.pairs ?? 0,
    fasterPairs: w.faster_pairs ?? 0,
  };
}

export async function verifyReplay(
  spec: {
    readonly docker: DockerService;
    readonly folder: TaskFolder;
    readonly image: string;
    readonly harbor: HarborOptions;
    readonly limits: ContainerLimits;
    readonly log: Logger;
    readonly labels: Readonly<Record<string, string>>;
  },
  signal?: AbortSignal,
): Promise<ReplayMeasurement> {
  const task = verifiableFolder(spec.folder);
  const inputs = harborTaskInputs(task);
  const timeouts = harborTimeouts(inputs.measuredMs, spec.harbor.buildTimeoutSeconds, protocolRounds(inputs.protocol));
  const trial = await runTrial({
    docker: spec.docker,
    task,
    harbor: spec.harbor,
    patch: spec.folder.expertPatch,
    limits: spec.limits,
    timeoutMs: timeouts.verifier * 1000,
    buildTimeoutMs: spec.harbor.buildTimeoutSeconds * 1000,
    image: spec.image,
    labels: spec.labels,
    log: spec.log,
    ...(signal ? { signal } : {}),
  });
  const base = { seed: null, durationMs: trial.durationMs, workloads: new Map<string, ReplayedWorkload>() };
  if (!trial.applied)
    return {
      ...base,
      rounds: null,
      problem: 'expert.patch does not apply',
      failure: { check: 'change', message: "expert.patch does not apply to the folder's repository" },
      error: null,
      reward: null,
      findings: [],
    };
  const out = trial.output!;
  const d = out.details;
  const findings = (d?.findings ?? []).map((f) => `${f.severity} ${f.rule}: ${f.path ?? ''}: ${f.message}`);
  const measurement = (d as { measurement?: { measurement?: { rounds?: number; seed?: number } } } | null)?.measurement?.measurement;
  const error =
    out.reward['verifier_error'] === 1 ? (d?.error?.message ?? (trial.timedOut ? 'it ran out of its time' : 'no details')) : null;
  const workloads = new Map<string, ReplayedWorkload>();
  if (!error && !d?.failure) for (const w of d?.workloads ?? []) workloads.set(w.name, replayed(w));
  return {
    ...base,
    seed: measurement?.seed ?? null,
    rounds: measurement?.rounds ?? null,
    workloads,
    problem: null,
    failure: d?.failure ? { check: d.failure.check, message: d.failure.message } : null,
    error,
    reward: out.reward['reward'] ?? null,
    findings,
  };
}
