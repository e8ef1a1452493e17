import type { StoredValidation, StoredWorkloadVerdict } from '../../cache/measurements.js';
import type { TaskRow } from './row.js';
import { REPO_DIR, SCRIPT_PATH } from '../../pipeline/services/environments/verification.js';

/**
 * The files of one task folder (`out/YYYY-MM/<instance_id>/`): problem_statement.md,
 * expert.patch, docker_build.sh, a Dockerfile that rebuilds the environment from the base image
 * (the layout validate measured in: the checkout at /repo),
 * workloads.json and metadata.json; for an agent harness, instruction.md (the task as given to an
 * agent: the environment, what to change, the problem statement) and score.sh (`perfmine score`). Pure; no production time anywhere, so the same task gives the
 * same bytes.
 */

export interface TaskFileInput {
  readonly row: TaskRow;
  readonly workloads: readonly StoredWorkloadVerdict[];
  readonly validation: StoredValidation;
  /** The image the environment was verified on (synthesize's base image). */
  readonly baseImage: string;
  readonly verifiedImage: string;
  readonly scriptSource: string;
  readonly pythonVersion: string | null;
  readonly repoUrl: string;
  /** How the statement, category and difficulty were made. */
  readonly provenance: TaskProvenance;
}

export interface TaskProvenance {
  /** The model that chose the category and difficulty, `heuristic` (rules on the diff), or null. */
  readonly categorySource: string | null;
  /** Why (the model's reasoning, or the rules that matched or why none did). */
  readonly categoryReason: string | null;
  /** `extracted` (LLM, checked near-verbatim) or `measured` (rules only: the measured workloads). */
  readonly statementSource: string | null;
  /** How the leak check judged "present at the base": `diff` or `base-tree`. */
  readonly leakCheckBasis: string;
}

export const TASK_FILES = [
  'Dockerfile',
  'docker_build.sh',
  'expert.patch',
  'instruction.md',
  'metadata.json',
  'problem_statement.md',
  'score.sh',
  'workloads.json',
] as const;

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/**
 * The environment as synthesize verified it and validate measured it: the base image, the
 * repository at /repo checked out at the base commit, the interpreter synthesize chose in
 * PERFMINE_PYTHON, the build script at /perfmine/docker_build.sh run from the checkout.
 */
export function taskDockerfile(input: { row: TaskRow; baseImage: string; repoUrl: string; pythonVersion: string | null }): string {
  const { row } = input;
  return [
    `# ${row.instance_id}: the environment perfmine verified and measured, rebuilt from the base image:`,
    `# the repository at the base commit, then the verified build script.`,
    `#   docker build -t ${row.image_name} .`,
    `FROM ${input.baseImage}`,
    `ARG REPO_URL=${input.repoUrl.replaceAll('{repo}', row.repo)}`,
    `RUN git clone -q --no-checkout "$REPO_URL" ${REPO_DIR} && git -C ${REPO_DIR} checkout -q --detach ${row.base_commit}`,
    ...(input.pythonVersion ? [`ENV PERFMINE_PYTHON=python${input.pythonVersion}`] : []),
    `COPY docker_build.sh ${SCRIPT_PATH}`,
    `WORKDIR ${REPO_DIR}`,
    `RUN bash ${SCRIPT_PATH}`,
    '',
  ].join('\n');
}

export function workloadsJson(workloads: readonly StoredWorkloadVerdict[]): string {
  const rows = [...workloads]
    .sort((a, b) => (a.workload < b.workload ? -1 : a.workload > b.workload ? 1 : 0))
    .map((w) => ({
      name: w.workload,
      benchmark: w.benchmark,
      module: w.module,
      class: w.className,
      function: w.function,
      params: w.params,
      unit: w.unit,
      base_median: w.baseMedian,
      expert_median: w.expertMedian,
      speedup: w.speedup,
      p_value: w.asv.pValue,
      asv_verdict: { mark: w.asv.mark, change: w.asv.change, ratio: w.asv.ratio, tilde: w.asv.tilde },
      perfmine_verdict: {
        change: w.paired.change,
        reason: w.paired.reason,
        normalized_median: w.paired.normalizedMedian,
        threshold: w.paired.threshold,
        minimum_detectable_speedup: w.paired.mds,
        p_value: w.paired.pValue,
        noise: w.paired.noise,
        faster_pairs: w.paired.fasterPairs,
        usable_pairs: w.paired.usablePairs,
        pair_ratios: w.paired.pairRatios,
        normalized_ratios: w.paired.normalizedRatios,
      },
    }));
  return json(rows);
}

export function metadataJson(input: TaskFileInput): string {
  const { row, validation: v, workloads } = input;
  return json({
    instance_id: row.instance_id,
    repo: row.repo,
    pull_number: row.pull_number,
    base_commit: row.base_commit,
    merge_commit: row.merge_commit,
    created_at: row.created_at,
    merged_at: row.merged_at,
    month: row.month,
    category: row.category,
    difficulty: row.difficulty,
    classifier: row.classifier,
    category_source: input.provenance.categorySource,
    category_reason: input.provenance.categoryReason,
    problem_statement: { source: input.provenance.statementSource, leak_check: input.provenance.leakCheckBasis },
    image_name: row.image_name,
    environment: {
      base_image: input.baseImage,
      verified_image: input.verifiedImage,
      build_script_source: input.scriptSource,
      python_version: input.pythonVersion,
    },
    expert_speedup: row.expert_speedup,
    workloads: {
      count: workloads.length,
      improved: workloads
        .filter((w) => w.paired.change === 'improved')
        .map((w) => w.workload)
        .sort(),
      worsened: workloads
        .filter((w) => w.paired.change === 'worsened')
        .map((w) => w.workload)
        .sort(),
      asv_improved: workloads.filter((w) => w.asv.mark === '-').length,
      asv_worsened: workloads.filter((w) => w.asv.mark === '+').length,
    },
    measurement: {
      engine: v.engine,
      protocol: v.protocol,
      minimum_detectable_speedup: { median: v.mdsMedian },
      selection: v.selection
        ? {
            mode: v.selection.mode,
            reason: v.selection.reason,
            selected: v.selection.selected,
            controls: v.selection.controls,
            skipped: v.selection.skipped.length,
          }
        : null,
      pairs: v.pairs,
      calibration_pairs: v.calibrationPairs,
      machine_factors: v.machineFactors,
      calibration_machine_factors: v.calibrationFactors,
      threshold: v.threshold,
      false_positive_rate: v.falsePositives.rate,
      false_positives: { flagged: v.falsePositives.flagged, compared: v.falsePositives.compared },
      asv_flags_on_calibration: v.asvCalibrationFlags,
    },
  });
}

/** The task as an agent harness gives it: where the code is, what to change, how it is judged, the statement. */
export function instructionMarkdown(row: TaskRow): string {
  return [
    `# ${row.instance_id}`,
    '',
    `The repository ${row.repo} is checked out at ${REPO_DIR} (commit ${row.base_commit}) in the environment this folder's Dockerfile builds`,
    `(\`docker build -t ${row.image_name} .\`; the package installed from source by docker_build.sh).`,
    '',
    "Make the code described below faster. Your change is judged by the speedup of the repository's asv benchmarks against the",
    "unchanged repository, compared with the expert's change; it fails when a test that passes now stops passing or a benchmark",
    'function returns a different value. Do not edit the benchmarks or the tests. Hand in your change as a unified diff',
    `against ${row.base_commit}; \`bash score.sh your.patch\` scores it.`,
    '',
    '## Problem statement',
    '',
    withNewline(row.problem_statement),
  ].join('\n');
}

/** The scoring entry point: `perfmine score` on this task folder. */
export function scoreScript(row: TaskRow): string {
  return [
    '#!/usr/bin/env bash',
    `# Scores a patch on ${row.instance_id}: built on the task's environment, checked (tests, benchmark return values)`,
    "# and measured against the base like the expert's patch, with perfmine's engine and protocol.",
    '#   bash score.sh agent.patch [model-name] [perfmine options, e.g. --db perfmine.db --json]',
    'set -euo pipefail',
    'if [ $# -lt 1 ]; then echo "usage: $0 PATCH [MODEL] [perfmine options]" >&2; exit 2; fi',
    'here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"',
    'patch="$1"; shift',
    'model="${1:-patch}"; [ $# -gt 0 ] && shift',
    'exec "${PERFMINE:-perfmine}" score --task "$here" --patch "$patch" --model "$model" "$@"',
    '',
  ].join('\n');
}

export function taskFiles(input: TaskFileInput): Record<(typeof TASK_FILES)[number], string> {
  return {
    Dockerfile: taskDockerfile(input),
    'docker_build.sh': withNewline(input.row.build_script),
    'expert.patch': input.row.patch,
    'instruction.md': instructionMarkdown(input.row),
    'metadata.json': metadataJson(input),
    'problem_statement.md': withNewline(input.row.problem_statement),
    'score.sh': scoreScript(input.row),
    'workloads.json': workloadsJson(input.workloads),
  };
}
