import { machineLine, type ReplayRecord } from '../../pipeline/concepts/records/replay-record.js';
import { folderDigest } from '../../pipeline/concepts/replay-files.js';
import { replaySummaryLine, summarizeReplays, type ReplaySummary } from '../../pipeline/concepts/replay-summary.js';
import { contentDigest, type MonthTask } from '../../stages/emit/month-files.js';

/**
 * The publish gate (issue 30): a task is published only when the replays of its current folder
 * (`perfmine replay`; same folder digest, so a replay of an edited copy or of an older version of
 * the task does not count) say its improvement replicates:
 *
 * - at least `minReplays` of them replicate (`emit.publish.minReplays`, default 1; 0 turns the
 *   gate off), and
 * - of its conclusive replays (replicating or not), at least `minReplicatedShare` replicate
 *   (`emit.publish.minReplicatedShare`, default 1: a single replay that does not replicate keeps
 *   the task out until it is looked at).
 *
 * Inconclusive replays (an underpowered measurement) and failed ones (a build, scan or
 * measurement that broke) count neither way; they are listed. A task left out is listed with its
 * reason: `not-replayed`, `too-few-replicating-replays` or `replays-do-not-replicate`. Pure.
 */

export interface GateOptions {
  readonly minReplays: number;
  readonly minReplicatedShare: number;
}

export type GateReason = 'not-replayed' | 'too-few-replicating-replays' | 'replays-do-not-replicate';

export interface GateDecision {
  readonly instanceId: string;
  readonly month: string;
  readonly published: boolean;
  readonly reason: GateReason | null;
  /** Why, in a sentence (published ones: their replays in short). */
  readonly detail: string;
  readonly summary: ReplaySummary;
}

/** The digest of a task's folder as emit wrote it (the same digest a replay of that folder records). */
export function monthTaskDigest(task: MonthTask): string {
  return folderDigest([
    ...Object.entries(task.files).map(([path, content]) => [path, contentDigest(content)] as const),
    ...Object.entries(task.blobs).map(([path, blob]) => [path, blob.sha256] as const),
  ]);
}

function short(r: ReplayRecord): string {
  return `replay ${r.id.slice(0, 8)} (${r.replayed_at.slice(0, 16).replace('T', ' ')}Z, ${machineLine(r.machine)}${r.note ? `, ${r.note}` : ''})`;
}

/** The gate's decision on one task from every replay known of it (any folder version; only its current one's count). */
export function gateTask(task: MonthTask, records: readonly ReplayRecord[], options: GateOptions): GateDecision {
  const summary = summarizeReplays(records, monthTaskDigest(task));
  const base = { instanceId: task.row.instance_id, month: task.row.month, summary };
  const v = summary.byVerdict;
  const stale =
    summary.stale > 0 ? ` (${summary.stale} replay${summary.stale === 1 ? '' : 's'} of another version of its folder not counted)` : '';
  if (options.minReplays === 0)
    return { ...base, published: true, reason: null, detail: `no gate (minReplays 0); ${replaySummaryLine(summary)}` };
  const conclusive = v.replicates + v['does-not-replicate'];
  if (conclusive > 0 && v.replicates / conclusive < options.minReplicatedShare) {
    const against = summary.replays.find((r) => r.verdict === 'does-not-replicate')!;
    const why = against.workloads.find((w) => w.outcome === 'does-not-replicate');
    return {
      ...base,
      published: false,
      reason: 'replays-do-not-replicate',
      detail: `${v['does-not-replicate']} of ${conclusive} conclusive replays do not replicate (the gate needs ${Math.round(options.minReplicatedShare * 100)}% of them to replicate)${stale}; ${short(against)}: ${against.reason ?? ''}${why ? `: ${why.name}: ${why.why}` : against.detail ? `: ${against.detail.split('\n')[0]}` : ''}`,
    };
  }
  if (v.replicates < options.minReplays) {
    const others = [v.inconclusive > 0 ? `${v.inconclusive} inconclusive` : null, v.failed > 0 ? `${v.failed} failed` : null]
      .filter(Boolean)
      .join(', ');
    return summary.count === 0
      ? { ...base, published: false, reason: 'not-replayed', detail: `no replay of its folder${stale}: run perfmine replay on it` }
      : {
          ...base,
          published: false,
          reason: 'too-few-replicating-replays',
          detail: `${v.replicates} replicating replay${v.replicates === 1 ? '' : 's'} of the ${options.minReplays} needed${others ? ` (${others})` : ''}${stale}`,
        };
  }
  return { ...base, published: true, reason: null, detail: replaySummaryLine(summary) };
}
