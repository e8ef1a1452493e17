import { machineLine, type ReplayRecord, type ReplayVerdict } from './records/replay-record.js';

/**
 * A task's replays in a few numbers (what `perfmine tasks`, the report, the dataset card and the
 * publish gate show): how many, by verdict, on which machines, and which workloads replicated in
 * how many. Only the replays of the task's current folder count (same digest); the others are
 * counted as `stale`. Pure.
 */

export interface WorkloadReplays {
  readonly name: string;
  /** Counted replays in which the rule judged it (validate found it improved)… */
  readonly judged: number;
  /** …and in which it replicated. */
  readonly replicated: number;
}

export interface ReplaySummary {
  /** Counted replays (of the task's current folder). */
  readonly count: number;
  readonly byVerdict: Readonly<Record<ReplayVerdict, number>>;
  /** Replays of another version of the folder (not counted). */
  readonly stale: number;
  /** The machines of the counted replays, one line each, first seen first. */
  readonly machines: readonly string[];
  readonly workloads: readonly WorkloadReplays[];
  /** Workloads that replicated in every counted replay that judged them (and in at least one). */
  readonly replicatedWorkloads: readonly string[];
  /** The counted replays themselves, oldest first. */
  readonly replays: readonly ReplayRecord[];
}

/** The summary of a task's replays; `digest` null counts every replay of the task. */
export function summarizeReplays(records: readonly ReplayRecord[], digest: string | null): ReplaySummary {
  const counted = records.filter((r) => digest === null || r.folder.digest === digest);
  const byVerdict: Record<ReplayVerdict, number> = { replicates: 0, 'does-not-replicate': 0, inconclusive: 0, failed: 0 };
  for (const r of counted) byVerdict[r.verdict] += 1;
  const machines = [...new Set(counted.map((r) => machineLine(r.machine)))];
  const perWorkload = new Map<string, { judged: number; replicated: number }>();
  for (const r of counted)
    for (const w of r.workloads) {
      if (w.outcome === null) continue;
      const e = perWorkload.get(w.name) ?? { judged: 0, replicated: 0 };
      e.judged += 1;
      if (w.outcome === 'replicates') e.replicated += 1;
      perWorkload.set(w.name, e);
    }
  const workloads = [...perWorkload.entries()].map(([name, e]) => ({ name, ...e })).sort((a, b) => (a.name < b.name ? -1 : 1));
  return {
    count: counted.length,
    byVerdict,
    stale: records.length - counted.length,
    machines,
    workloads,
    replicatedWorkloads: workloads.filter((w) => w.replicated > 0 && w.replicated === w.judged).map((w) => w.name),
    replays: counted,
  };
}

/** `3 replays (3 replicate) on 1 machine` and the like (with the replays of other folder versions, when any). */
export function replaySummaryLine(s: ReplaySummary): string {
  if (s.count === 0) return s.stale > 0 ? `not replayed (${s.stale} of another version of the folder not counted)` : 'not replayed';
  const parts = (['replicates', 'does-not-replicate', 'inconclusive', 'failed'] as const)
    .filter((v) => s.byVerdict[v] > 0)
    .map((v) => `${s.byVerdict[v]} ${v === 'replicates' ? 'replicate' : v}`);
  const stale = s.stale > 0 ? `; ${s.stale} of another version of the folder not counted` : '';
  return `${s.count} replay${s.count === 1 ? '' : 's'} (${parts.join(', ')}) on ${s.machines.length} machine${s.machines.length === 1 ? '' : 's'}${stale}`;
}
