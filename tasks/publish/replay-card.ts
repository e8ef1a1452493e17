import { REPLAYS_DIR, replayFileText } from '../../pipeline/concepts/replay-files.js';
import { replaySummaryLine } from '../../pipeline/concepts/replay-summary.js';
import type { GateDecision, GateOptions } from './replay-gate.js';

/**
 * What the dataset card says of replays and the gate, and the replay records each published task
 * folder carries (`replays/<id>.json`, the counted ones). Pure.
 */

/** A month's gate: its options and the decision on every task emitted for it (published or not). */
export interface MonthGate {
  readonly options: GateOptions;
  readonly decisions: readonly GateDecision[];
}

const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** The card's "Replays" section (nothing when no month carries a gate). */
export function replayCardSection(months: readonly { readonly month: string; readonly gate?: MonthGate | null }[]): string[] {
  const gated = months.flatMap((m) => (m.gate ? [{ month: m.month, gate: m.gate }] : []));
  if (gated.length === 0) return [];
  const options = gated[0]!.gate.options;
  const published = gated.flatMap((g) => g.gate.decisions.filter((d) => d.published));
  const leftOut = gated.flatMap((g) => g.gate.decisions.filter((d) => !d.published));
  return [
    '## Replays',
    '',
    'Before publishing, each task was rebuilt from its folder alone (`docker build` of the folder, the expert patch applied to the working tree) and',
    "measured again with its engine and protocol on a machine that is recorded (`perfmine replay`; each record is in the task's `replays/` folder).",
    "A workload validate found improved replicates when the replay calls it improved beyond the replay's own noise and the two speedups' 95%",
    'intervals overlap (each widened by 10% of its log speedup); a replay replicates when all of them do. ' +
      (options.minReplays === 0
        ? 'No gate was applied (`emit.publish.minReplays` 0).'
        : `A task is published when at least ${options.minReplays} replay${options.minReplays === 1 ? '' : 's'} of its current folder replicate${options.minReplays === 1 ? 's' : ''} and at least ${options.minReplicatedShare * 100}% of its conclusive replays do.`),
    '',
    '| task | replays | machines | replicated workloads (replays that judged them) |',
    '| --- | --- | --- | --- |',
    ...published.map(
      (d) =>
        `| ${d.instanceId} | ${cell(replaySummaryLine(d.summary))} | ${cell(d.summary.machines.join('; ') || '–')} | ${cell(d.summary.workloads.map((w) => `${w.name} (${w.replicated}/${w.judged})`).join(', ') || '–')} |`,
    ),
    '',
    ...(leftOut.length === 0
      ? []
      : [
          `Left out by the gate (${leftOut.length} task${leftOut.length === 1 ? '' : 's'}):`,
          '',
          '| task | month | reason | detail |',
          '| --- | --- | --- | --- |',
          ...leftOut.map((d) => `| ${d.instanceId} | ${d.month} | ${d.reason} | ${cell(d.detail)} |`),
          '',
        ]),
  ];
}

/** `replays/<id>.json` of a published task: the replays of its current folder. */
export function replayFilesOf(decision: GateDecision | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of decision?.summary.replays ?? []) out[`${REPLAYS_DIR}/${r.id}.json`] = replayFileText(r);
  return out;
}
