import { tasksParquet } from '../../stages/emit/parquet.js';
import { sortRows } from '../../stages/emit/row.js';
import type { FileContent, MonthTask } from '../../stages/emit/month-files.js';
import {
  COST_MODEL_NOTE,
  formatMinutes,
  formatUsd,
  unrecordedNote,
  type CostFigures,
  type MonthCosts,
} from '../../pipeline/concepts/task-costs.js';
import { replayCardSection, replayFilesOf, type MonthGate } from './replay-card.js';
import { memorySource, readTaskFolderContents, TaskFolderError } from '../folder/index.js';

/**
 * The emitted months as a Hugging Face dataset folder (`perfmine publish`): `data/YYYY-MM.parquet`
 * per month, `tasks/YYYY-MM/<instance_id>/` with every task folder, and README.md whose YAML
 * header declares a `default` configuration over all months and one configuration per month,
 * followed by the dataset card. Pure, with nothing time-dependent: the same months give the same
 * bytes.
 */

export type FunnelCounts = Readonly<Record<'collected' | 'filtered' | 'classified' | 'built' | 'validated' | 'emitted', number>>;

export interface PublishedMonth {
  readonly month: string;
  readonly tasks: readonly MonthTask[];
  /** The month's funnel over every repository (pull requests through each stage). */
  readonly funnel: FunnelCounts;
  /** What the month's tasks cost (machine minutes, LLM dollars); absent: the card says nothing of it. */
  readonly costs?: MonthCosts | null;
  /** The publish gate's decision on every task emitted for the month (`tasks` holds the published ones); absent: no gate. */
  readonly gate?: MonthGate | null;
}

/** Field, type (as the Parquet file holds it) and meaning, for the card. */
export const FIELDS: readonly (readonly [string, string, string])[] = [
  ['instance_id', 'string', 'SWE-bench style id: `owner__name-N`'],
  ['repo', 'string', 'GitHub repository `owner/name`'],
  ['pull_number', 'int32', 'the merged pull request'],
  ['base_commit', 'string', "the commit the task starts from (the pull request's base)"],
  ['merge_commit', 'string', 'the merged commit'],
  ['created_at', 'string', 'when the pull request was opened (ISO 8601)'],
  ['merged_at', 'string', 'when it was merged (ISO 8601); the month is taken from it'],
  ['problem_statement', 'string', 'the instruction given to an agent'],
  ['patch', 'string', "the expert patch (the pull request's diff against the base)"],
  ['image_name', 'string', "the name of the task's environment image"],
  ['build_script', 'string', 'the verified `docker_build.sh` that installs the package from source'],
  ['workloads', 'struct<count: int32, names: list<string>>', 'the asv workloads measured'],
  [
    'expert_speedup',
    'struct<all: double, improved: double>',
    'geometric mean of base/expert time over all workloads, and over the improved ones (null when none)',
  ],
  ['category', 'string (nullable)', 'optimization category'],
  ['difficulty', 'string (nullable)', 'difficulty'],
  ['classifier', 'string', 'the model that classified the pull request, or `heuristic`'],
  ['month', 'string', '`YYYY-MM` of `merged_at`'],
  [
    'docker_image',
    'string (nullable)',
    "the task's environment image by digest (`registry/perfmine/<instance_id>@sha256:...`, as Harbor's `docker_image`), when published with `--registry`",
  ],
  ['base_image', 'string (nullable)', "the base image the task's Dockerfile starts from, in the same registry by digest"],
];

function yamlString(s: string): string {
  return JSON.stringify(s);
}

/** The README's YAML header: a `default` config over all months, one config per month (split `test`). */
export function yamlHeader(months: readonly string[]): string {
  const lines = [
    '---',
    'license: other',
    'pretty_name: perfmine performance-optimization tasks',
    'task_categories:',
    '- text-generation',
    'tags:',
    '- code',
    '- performance',
    '- benchmark',
    'configs:',
  ];
  lines.push('- config_name: default', '  data_files:', '  - split: test', `    path: ${yamlString('data/*.parquet')}`);
  for (const m of months)
    lines.push(`- config_name: ${yamlString(m)}`, '  data_files:', '  - split: test', `    path: ${yamlString(`data/${m}.parquet`)}`);
  lines.push('---');
  return lines.join('\n');
}

interface Measured {
  readonly flagged: number;
  readonly compared: number;
}

/** A task's base/base comparisons (the one reader); null when its folder cannot be read (the card names the task). */
function readFalsePositives(task: MonthTask): Measured | null {
  try {
    const meta = readTaskFolderContents(memorySource(task.row.instance_id, task.files, Object.keys(task.blobs))).metadata;
    const fp = meta.measurement.false_positives;
    return fp && fp.flagged !== null && fp.compared !== null ? { flagged: fp.flagged, compared: fp.compared } : { flagged: 0, compared: 0 };
  } catch (error) {
    if (error instanceof TaskFolderError) return null;
    throw error;
  }
}

function falsePositivesOf(task: MonthTask): Measured {
  return readFalsePositives(task) ?? { flagged: 0, compared: 0 };
}

function rate(m: Measured): string {
  return m.compared === 0
    ? 'n/a'
    : `${((100 * m.flagged) / m.compared).toFixed(2)}% (${m.flagged} of ${m.compared} base/base workload comparisons flagged)`;
}

/** The dataset card (README.md) for the months, header included. */
export function datasetCard(months: readonly PublishedMonth[]): string {
  const all = months.flatMap((m) => m.tasks);
  const repos = [...new Set(all.map((t) => t.row.repo))].sort();
  const fpAll = all
    .map(falsePositivesOf)
    .reduce((a, b) => ({ flagged: a.flagged + b.flagged, compared: a.compared + b.compared }), { flagged: 0, compared: 0 });
  const out: string[] = [yamlHeader(months.map((m) => m.month)), ''];
  out.push(
    '# perfmine performance-optimization tasks',
    '',
    `${all.length} tasks from ${repos.length} repositor${repos.length === 1 ? 'y' : 'ies'}, ${months.length} month${months.length === 1 ? '' : 's'} (${months.map((m) => m.month).join(', ') || 'none'}).`,
    'Load every month with `load_dataset(path)` (configuration `default`) or one month by its configuration name (`YYYY-MM`).',
    '',
    '## What a task is',
    '',
    'A merged GitHub pull request whose main purpose is speed, in a Python repository with an airspeed-velocity (asv) benchmark suite.',
    'An agent gets the repository at `base_commit` and the `problem_statement`, and must make the code faster without changing its behaviour.',
    "It is scored against the expert (the pull request's own patch) on the suite's workloads: per-workload speedup = time(base) / time(patched),",
    'overall speedup = their geometric mean, advantage = speedup(agent) - speedup(expert), stratified advantage at module / class / function level',
    '(from the dotted workload names), normalized advantage = advantage / sqrt(var(agent) + var(expert)).',
    '',
    'Each task folder (`tasks/YYYY-MM/<instance_id>/`) holds `problem_statement.md` (the instruction), `Dockerfile` and `docker_build.sh` (the environment),',
    '`expert.patch`, `workloads.json` (per-workload measurements and verdicts), `metadata.json` and `score.sh` (scores a patch with `perfmine score`).',
    '',
    '## Fields',
    '',
    '| field | type | meaning |',
    '| --- | --- | --- |',
    ...FIELDS.map(([f, t, m]) => `| \`${f}\` | ${t} | ${m} |`),
    '',
    '## How tasks were selected and measured',
    '',
    'Repositories with an asv configuration are found; their merged pull requests of the month are collected, filtered by rules (merged, asv config',
    'present at the base commit, core files touched, size limits, message patterns) and classified (performance intent, category, difficulty,',
    'problem statement checked near-verbatim against the pull request and for leaks of the solution). A Docker environment is built and verified for',
    'the base commit. Every workload is measured on the base and the expert in warm workers alternating batch by batch in a randomized order',
    "(perfmine's harness, asv semantics) or in alternating asv invocations; a task is kept when at least one workload is faster consistently across",
    "base/expert pairs and beyond that workload's own noise (measured by base/base calibration pairs, false-positive rate controlled over all",
    "workloads, never below a 1.05 speedup), and the expert passes every test the base passes and keeps the benchmarks' return values.",
    '',
    '## Funnel and counts per month',
    '',
    '| month | collected | filtered | classified | built | validated | emitted (tasks) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...months.map(
      (m) =>
        `| ${m.month} | ${m.funnel.collected} | ${m.funnel.filtered} | ${m.funnel.classified} | ${m.funnel.built} | ${m.funnel.validated} | ${m.tasks.length} |`,
    ),
    '',
    '## Measurement protocol and its false-positive rate',
    '',
    'The protocol of each task (engine, rounds, samples, seed, CPU pinning) is in its `metadata.json` (`measurement.protocol`). The false-positive',
    'rate is what the keep verdict flags on base/base calibration pairs, where nothing changed:',
    '',
    '| month | false-positive rate |',
    '| --- | --- |',
    ...months.map(
      (m) =>
        `| ${m.month} | ${rate(m.tasks.map(falsePositivesOf).reduce((a, b) => ({ flagged: a.flagged + b.flagged, compared: a.compared + b.compared }), { flagged: 0, compared: 0 }))} |`,
    ),
    `| all | ${rate(fpAll)} |`,
    '',
    ...unreadableMetadata(all),
    ...costSection(months),
    ...imageSection(all),
    ...replayCardSection(months),
    '## Licences',
    '',
    "The dataset's code (patches, build scripts, benchmark names) and text (problem statements) come from the repositories below and stay under",
    "each repository's own licence; perfmine does not record the licence, so check it at the source before redistributing.",
    '',
    '| repository | tasks | licence |',
    '| --- | ---: | --- |',
    ...repos.map((r) => `| ${r} | ${all.filter((t) => t.row.repo === r).length} | see https://github.com/${r} |`),
    '',
  );
  return out.join('\n');
}

/** The tasks whose metadata.json could not be read, so that a rate over fewer comparisons says why. */
function unreadableMetadata(tasks: readonly MonthTask[]): string[] {
  const unreadable = tasks.filter((t) => readFalsePositives(t) === null).map((t) => t.row.instance_id);
  if (unreadable.length === 0) return [];
  return [
    `Not counted: the \`metadata.json\` of ${unreadable.sort().join(', ')} could not be read; write the folder again (\`perfmine stage emit --force\`).`,
    '',
  ];
}

/** "Images": each task's environment image and base image by digest (publish --registry); nothing when none was pushed. */
function imageSection(tasks: readonly MonthTask[]): string[] {
  const named = tasks.filter((t) => t.row.docker_image);
  if (named.length === 0) return [];
  return [
    '## Images',
    '',
    "Each task's environment, built from its folder as Harbor builds it and pushed by digest (the `docker_image` column); its",
    'Dockerfile starts from the base image in the same registry by digest (`base_image`), so the folder also builds wherever that registry is reachable.',
    '',
    '| task | docker_image | base_image |',
    '| --- | --- | --- |',
    ...[...named]
      .sort((a, b) => (a.row.instance_id < b.row.instance_id ? -1 : 1))
      .map((t) => `| ${t.row.instance_id} | \`${t.row.docker_image}\` | \`${t.row.base_image ?? ''}\` |`),
    '',
  ];
}

/** "What the tasks cost": per month and per task (pipeline/concepts/task-costs.ts); nothing when no month has figures. */
function costSection(months: readonly PublishedMonth[]): string[] {
  const costed = months.flatMap((m) => (m.costs ? [m.costs] : []));
  if (costed.length === 0) return [];
  const min = (m: number) => m.toFixed(2);
  const both = (f: CostFigures | null) => (f ? `${formatMinutes(f.machineMinutes)}, ${formatUsd(f.llmUsd)}` : 'n/a');
  return [
    '## What the tasks cost',
    '',
    COST_MODEL_NOTE,
    '',
    '| month | tasks | machine minutes (builds / measurement / replays) | LLM | per emitted task | direct, per task |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...costed.map(
      (c) =>
        `| ${c.month} | ${c.emitted} | ${min(c.total.machineMinutes)} (${min(c.total.buildMinutes)} / ${min(c.total.measureMinutes)} / ${min(c.total.replayMinutes)}) | ${formatUsd(c.total.llmUsd)} | ${both(c.perEmittedTask)} | ${both(c.directPerTask)} |`,
    ),
    ...costed.flatMap((c) => {
      const note = unrecordedNote(c);
      return note ? ['', `${c.month}: ${note}.`] : [];
    }),
    '',
    'Per task (its own share):',
    '',
    '| task | builds (min) | measurement (min) | replays (min) | machine (min) | LLM |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...costed.flatMap((c) =>
      c.tasks.map(
        (t) =>
          `| ${t.instanceId} | ${min(t.buildMinutes)} | ${min(t.measureMinutes)} | ${min(t.replayMinutes)} | ${min(t.machineMinutes)} | ${formatUsd(t.llmUsd)} |`,
      ),
    ),
    '',
  ];
}

/** Every file of the dataset folder by relative path. */
export function datasetFiles(months: readonly PublishedMonth[]): Map<string, FileContent> {
  const sorted = [...months].sort((a, b) => (a.month < b.month ? -1 : 1));
  const out = new Map<string, FileContent>();
  out.set('README.md', datasetCard(sorted));
  for (const m of sorted) {
    out.set(`data/${m.month}.parquet`, tasksParquet(sortRows(m.tasks.map((t) => t.row))));
    for (const t of [...m.tasks].sort((a, b) => (a.row.instance_id < b.row.instance_id ? -1 : 1))) {
      for (const name of [...Object.keys(t.files), ...Object.keys(t.blobs)].sort())
        out.set(`tasks/${m.month}/${t.row.instance_id}/${name}`, t.files[name] ?? t.blobs[name]!);
      const replays = replayFilesOf(m.gate?.decisions.find((d) => d.instanceId === t.row.instance_id));
      for (const [name, text] of Object.entries(replays)) out.set(`tasks/${m.month}/${t.row.instance_id}/${name}`, text);
    }
  }
  return out;
}
