import { z } from 'zod';

/**
 * One replay of an emitted task (`perfmine replay`, issue 30): the task rebuilt from its folder
 * alone, the expert patch applied, measured again with the task's engine and protocol, and each
 * workload validate found improved judged by the replication rule
 * (tasks/replay/rule.ts). Written as `<task folder>/replays/<id>.json` and into the
 * store (`replays`, migration 0017); replays made anywhere add up by their id. Read back by
 * `publish` (the gate), `perfmine tasks` and the report. Unknown keys are dropped on reading, so a
 * newer perfmine's record still reads.
 */

export const REPLAY_FORMAT = 'perfmine-replay/1';

/** A replay's verdict on the task. */
export const REPLAY_VERDICTS = ['replicates', 'does-not-replicate', 'inconclusive', 'failed'] as const;
export type ReplayVerdict = (typeof REPLAY_VERDICTS)[number];

/** The rule's outcome for one workload validate found improved. */
export const WORKLOAD_OUTCOMES = ['replicates', 'does-not-replicate', 'inconclusive'] as const;
export type WorkloadOutcome = (typeof WORKLOAD_OUTCOMES)[number];

const interval = z.tuple([z.number(), z.number()]);

/** A speedup (base time / expert time, > 1 when faster) with its 95% interval. */
const estimate = {
  speedup: z.number().nullable(),
  interval: interval.nullable(),
  /** The minimum detectable speedup of that measurement (null when not tested). */
  mds: z.number().nullable(),
};

export const replayWorkloadSchema = z.object({
  name: z.string(),
  /** What validate recorded (workloads.json). */
  recorded: z.object({ change: z.string(), usable_pairs: z.number().int().nonnegative(), ...estimate }),
  /** What the replay measured; null when the replayed suite has no such workload. */
  replay: z
    .object({
      change: z.string(),
      reason: z.string().nullable(),
      usable_pairs: z.number().int().nonnegative(),
      faster_pairs: z.number().int().nonnegative(),
      p_value: z.number().nullable(),
      ...estimate,
    })
    .nullable(),
  /** The rule's outcome; null for a workload validate did not find improved (reported, not judged). */
  outcome: z.enum(WORKLOAD_OUTCOMES).nullable(),
  why: z.string(),
});
export type ReplayWorkload = z.infer<typeof replayWorkloadSchema>;

const nullableString = z.string().nullable();

/** The machine the replay measured on, as read from a container on it (null where not readable). */
export const replayMachineSchema = z.object({
  cpu_model: nullableString,
  /** CPUs of the engine's machine (`docker info`). */
  cpus: z.number().int().nullable(),
  /** The cpuset the harness workers were pinned to (null: not pinned), and what a container there saw. */
  cpuset: nullableString,
  cpuset_effective: nullableString,
  /** scaling_governor of the cpuset's CPUs ("performance", …); null when cpufreq is not exposed. */
  governor: nullableString,
  /** SMT: /sys/devices/system/cpu/smt/control and active ("on 1", "off 0", "notsupported"). */
  smt: nullableString,
  kernel: nullableString,
  os: nullableString,
  docker: z.object({
    server_version: nullableString,
    cgroup_version: nullableString,
    /** The limits every replay container ran with (docker.cpus, memoryMb, pidsLimit). */
    limits: z.object({ cpus: z.number(), memory_mb: z.number(), pids_limit: z.number() }),
  }),
  /** `pythonX.Y --version` in the replayed image. */
  image_python: nullableString,
  /** /proc/loadavg's three averages when the measurement started and ended. */
  load_average: z.object({ before: z.array(z.number()).nullable(), after: z.array(z.number()).nullable() }),
});
export type ReplayMachine = z.infer<typeof replayMachineSchema>;

export const replayRecordSchema = z.object({
  format: z.literal(REPLAY_FORMAT),
  id: z.string().uuid(),
  task: z.object({
    instance_id: z.string(),
    repo: z.string(),
    pull_number: z.number().int().positive(),
    month: nullableString,
    base_commit: z.string(),
  }),
  replayed_at: z.string(),
  perfmine_version: z.string(),
  /** Free text given with `--note` (e.g. the conditions: "a CPU hog on every core"). */
  note: nullableString,
  /** The folder replayed: its digest (replay-files.ts folderDigest) and where it was. */
  folder: z.object({ digest: z.string(), path: z.string() }),
  machine: replayMachineSchema,
  engine: z.string(),
  /** The protocol measured with (the task's recorded one; see tasks/replay/protocol.ts). */
  protocol: z.record(z.string(), z.unknown()),
  /** The rule's settings (tasks/replay/rule.ts). */
  rule: z.object({ level: z.number(), magnitude_tolerance: z.number() }),
  build: z.object({
    /** Built for an earlier replay of the same `perfmine replay` call (`--times N`). */
    reused: z.boolean(),
    no_cache: z.boolean(),
    /** The package index given as PIP_INDEX_URL (null: the Dockerfile's own). */
    index: nullableString,
    base_ms: z.number().nonnegative().nullable(),
    expert_ms: z.number().nonnegative().nullable(),
    /** The outside scan of the replayed environment (null when it was not reached). */
    scan: z.object({ verdict: z.string(), findings: z.array(z.string()), duration_ms: z.number().nonnegative() }).nullable(),
  }),
  durations: z.object({
    build_ms: z.number().nonnegative(),
    scan_ms: z.number().nonnegative(),
    measure_ms: z.number().nonnegative(),
    /** The machine time this replay cost: its builds and scan unless reused, the probe and the measurement. */
    machine_ms: z.number().nonnegative(),
  }),
  workloads: z.array(replayWorkloadSchema),
  /** Workloads validate found improved (the ones judged), those that replicate, and their share. */
  judged: z.number().int().nonnegative(),
  replicated: z.number().int().nonnegative(),
  replicated_share: z.number().nullable(),
  replicated_workloads: z.array(z.string()),
  verdict: z.enum(REPLAY_VERDICTS),
  /** Why it is not `replicates` (a named reason), and the detail. */
  reason: nullableString,
  detail: nullableString,
});
export type ReplayRecord = z.infer<typeof replayRecordSchema>;

/** `owner/name#N` of a replayed task (the key its other records have in the store). */
export function replayTaskKey(record: Pick<ReplayRecord, 'task'>): string {
  return `${record.task.repo}#${record.task.pull_number}`;
}

/** A machine in one line, for listings: `CPU model, N CPUs, kernel K`. */
export function machineLine(m: ReplayMachine): string {
  return [
    m.cpu_model ?? 'unknown CPU',
    m.cpus === null ? null : `${m.cpus} CPU${m.cpus === 1 ? '' : 's'}`,
    m.kernel && `kernel ${m.kernel}`,
  ]
    .filter(Boolean)
    .join(', ');
}
