import { randomUUID } from 'node:crypto';
import { REPLAY_FORMAT, replayRecordSchema, type ReplayRecord } from '../../pipeline/concepts/records/replay-record.js';

/** A machine as a replay records it. */
export const MACHINE: ReplayRecord['machine'] = {
  cpu_model: 'AMD EPYC',
  cpus: 2,
  cpuset: '1',
  cpuset_effective: '1',
  governor: null,
  smt: 'notsupported 0',
  kernel: '6.1.0',
  os: 'Debian GNU/Linux 12 (bookworm)',
  docker: { server_version: '20.10.24', cgroup_version: '1', limits: { cpus: 2, memory_mb: 4096, pids_limit: 1024 } },
  image_python: 'Python 3.11.2',
  load_average: { before: [0.5, 0.5, 0.5], after: [0.6, 0.5, 0.5] },
};

/**
 * A replay record of a task (checked against the schema): `outcomes` gives each judged workload's
 * outcome; the verdict follows the rule (all replicate: replicates; any does not: does not; else
 * inconclusive) unless given.
 */
export function replayRecord(options: {
  instanceId: string;
  repo: string;
  pullNumber: number;
  month?: string;
  digest: string;
  outcomes?: Record<string, 'replicates' | 'does-not-replicate' | 'inconclusive'>;
  verdict?: ReplayRecord['verdict'];
  reason?: string | null;
  at?: string;
  machine?: Partial<ReplayRecord['machine']>;
  machineMs?: number;
  note?: string | null;
  id?: string;
}): ReplayRecord {
  const outcomes = options.outcomes ?? { 'bench.time_x': 'replicates' };
  const names = Object.keys(outcomes);
  const replicated = names.filter((n) => outcomes[n] === 'replicates');
  const verdict =
    options.verdict ??
    (replicated.length === names.length
      ? 'replicates'
      : names.some((n) => outcomes[n] === 'does-not-replicate')
        ? 'does-not-replicate'
        : 'inconclusive');
  return replayRecordSchema.parse({
    format: REPLAY_FORMAT,
    id: options.id ?? randomUUID(),
    task: {
      instance_id: options.instanceId,
      repo: options.repo,
      pull_number: options.pullNumber,
      month: options.month ?? '2025-04',
      base_commit: 'b'.repeat(40),
    },
    replayed_at: options.at ?? '2026-11-27T10:00:00.000Z',
    perfmine_version: '0.1.0',
    note: options.note ?? null,
    folder: { digest: options.digest, path: '/tmp/task' },
    machine: { ...MACHINE, ...options.machine },
    engine: 'perfmine',
    protocol: { rounds: 20 },
    rule: { level: 0.95, magnitude_tolerance: 0.1 },
    build: {
      reused: false,
      no_cache: true,
      index: null,
      base_ms: 1000,
      expert_ms: 1000,
      scan: { verdict: 'accepted', findings: [], duration_ms: 10 },
    },
    durations: { build_ms: 2000, scan_ms: 10, measure_ms: 30_000, machine_ms: options.machineMs ?? 32_010 },
    workloads: names.map((name) => ({
      name,
      recorded: { change: 'improved', usable_pairs: 6, speedup: 2, interval: [1.9, 2.1], mds: 1.1 },
      replay: {
        change: outcomes[name] === 'replicates' ? 'improved' : 'unchanged',
        reason: null,
        usable_pairs: 6,
        faster_pairs: 6,
        p_value: 0.001,
        speedup: 2,
        interval: [1.9, 2.1],
        mds: 1.1,
      },
      outcome: outcomes[name],
      why: outcomes[name] === 'replicates' ? 'improved: 2.000x' : 'the replay calls it unchanged (not-significant)',
    })),
    judged: names.length,
    replicated: replicated.length,
    replicated_share: names.length === 0 ? null : replicated.length / names.length,
    replicated_workloads: replicated,
    verdict,
    reason:
      options.reason ??
      (verdict === 'replicates'
        ? null
        : verdict === 'does-not-replicate'
          ? 'workload-does-not-replicate'
          : verdict === 'failed'
            ? 'build-failed'
            : 'underpowered'),
    detail: null,
  });
}
