/**
 * How an agent measures in a task's environment, as the problem statement and instruction.md
 * say it: perfmine's in-image `perfmine-bench` (always there; only the image's Python, no
 * network), and asv's own commands where the task was measured with asv (then asv is in the
 * image). Pure.
 */
export interface MeasuringTool {
  /** The engine validate measured the task with. */
  readonly engine: 'perfmine' | 'asv';
  /** Workloads the task's measurement covered. */
  readonly workloads: number;
  /** Minutes a compare of them took where the task was made (the base side's build and the measurement), when known. */
  readonly compareMinutes: number | null;
}

/** What `compare` costs, from what validate and synthesize recorded: the measurement and one build. */
export function compareMinutesOf(measuredMs: number | null, buildMs: number | null): number | null {
  if (measuredMs === null) return null;
  return Math.max(1, Math.ceil((measuredMs + (buildMs ?? 0)) / 60_000));
}

export function measuringToolText(tool: MeasuringTool): string {
  const took =
    tool.compareMinutes === null
      ? ''
      : ` A \`compare\` of this task's ${tool.workloads} workload${tool.workloads === 1 ? '' : 's'} took about ${tool.compareMinutes} minute${tool.compareMinutes === 1 ? '' : 's'} where the task was made.`;
  const asv =
    tool.engine === 'asv' ? ' asv is installed too: `asv run --python=same --bench <regex>`, `asv profile --python=same <benchmark>`.' : '';
  return (
    'The environment has `perfmine-bench` for it (it needs no network): `perfmine-bench list` lists the workloads, ' +
    '`perfmine-bench run --bench <regex>` times them, and `perfmine-bench compare --bench <regex>` measures your working tree ' +
    "against the unchanged commit, the two interleaved, and prints each workload's speedup with its interval, the smallest " +
    `speedup it can detect and its verdict.${took}${asv}`
  );
}
