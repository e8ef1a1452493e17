import type { StoredValidation, StoredWorkloadVerdict } from '../../cache/measurements.js';
import { taskIdentity, type TaskRow } from './row.js';
import { REPO_DIR, SCRIPT_PATH } from '../../pipeline/services/environments/verification.js';
import { SEAL_PATH, taskSourceDockerfileLines, TASK_SOURCE_DIR } from '../../pipeline/services/environments/source-tier.js';
import type { TarEntry } from '../../pipeline/services/tar.js';
import { LOCK_READER_PATH } from '../../pipeline/services/environments/source-tier.js';
import { packageTierDockerfile, type PackageTierRecord } from '../../pipeline/services/environments/package-tier.js';
import { lockedDebianInstallLines } from '../../pipeline/services/environments/debian-lock.js';
import { buildConstraints, requirementsLock, type EnvironmentLock } from '../../pipeline/services/environments/lock.js';
import { metadataSchema, TASK_FORMAT, TASK_TEXT_FILES } from '../../tasks/folder/index.js';
import { WHEELS_CHECK_FILE, WHEELS_DIR, wheelsCheckFile, type VendoredFile } from '../../pipeline/concepts/vendored-wheels.js';

/**
 * The files of one task folder (`out/YYYY-MM/<instance_id>/`): problem_statement.md,
 * expert.patch, docker_build.sh, a Dockerfile that rebuilds the environment from the base image
 * alone (the layout validate measured in: the sealed checkout at /repo, made from the folder's
 * `source/repo.bundle`, which holds the base commit and its ancestors only; perfmine's files under
 * `perfmine/` and `usr/`: the sealing script and the in-image `perfmine-bench`), workloads.json and
 * metadata.json; for an agent harness, instruction.md (the task as given to an agent: the
 * environment, how to measure, what to change, the problem statement) and score.sh (`perfmine
 * score`). The bundles are binary and are written beside these (emit's blobs), as are the lock's
 * files when the folder carries them (`wheels/`, checked by `wheels.sha256`). Pure; no production
 * time anywhere, so the same task gives the same bytes.
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
  /** The repository's public URL (emit.repoUrl filled in), for the metadata. */
  readonly repoUrl: string;
  /** How the statement, category and difficulty were made. */
  readonly provenance: TaskProvenance;
  /** perfmine's files every environment carries (source-tier.ts sourceTierFiles). */
  readonly perfmineFiles: readonly TarEntry[];
  /** The sealed history's files (`source/...`) and their SHA-256. */
  readonly sealedHistory: Readonly<Record<string, string>>;
  /** How to measure in the environment (measuring-tool.ts), as instruction.md says it. */
  readonly measuringTool: string;
  /** What the verified environment holds (synthesize's lock); null for an environment built before locks. */
  readonly lock: EnvironmentLock | null;
  /** The lock's files the folder carries under `wheels/` (emit.vendorWheels; written as blobs beside these). */
  readonly wheels?: readonly VendoredFile[];
  /**
   * The repository's own base image and the Debian packages perfmine installed on it (its
   * package tier, `repositories."owner/name"`): the Dockerfile starts from that base image and
   * installs the packages, instead of naming the tier, which exists only in perfmine's engine:
   * its lock (`debianLock`) at exactly those versions, or, for a record made before locks, by name.
   */
  readonly packageTier?: PackageTierRecord | null;
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

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

function textOf(entry: TarEntry): string {
  const { content } = entry;
  if (typeof content === 'string') return content;
  if (Buffer.isBuffer(content)) return content.toString('utf8');
  throw new Error(`${entry.name}: a task file must be given by its content`);
}

/**
 * The environment as synthesize verified it and validate measured it, from the folder alone: a
 * first stage seals `source/repo.bundle` into /repo (so the bundle is no layer of the image),
 * then the base image with the sealed /repo, perfmine's files, the interpreter synthesize chose in
 * PERFMINE_PYTHON, and the build script run from the checkout (then any module repository it
 * fetched sealed, as perfmine's own builds do).
 */
export function taskDockerfile(input: {
  row: TaskRow;
  baseImage: string;
  pythonVersion: string | null;
  perfmineFiles: readonly TarEntry[];
  lock: EnvironmentLock | null;
  packageTier?: PackageTierRecord | null;
  /** The locked files the folder carries (`wheels/`): installed from there, with no index. */
  wheels?: readonly VendoredFile[];
}): string {
  const { row, lock } = input;
  const tier = input.packageTier ?? null;
  const baseImage = tier ? tier.baseImage : input.baseImage;
  // the package tier's lock installed at its versions; a record without a lock: the tier's own lines after its FROM (apt-get install by name)
  const packages =
    !tier || tier.debianPackages.length === 0
      ? []
      : tier.debianLock
        ? lockedDebianInstallLines(tier.debianPackages, tier.debianLock)
        : packageTierDockerfile(tier.baseImage, tier.debianPackages).trimEnd().split('\n').slice(1);
  const executables = input.perfmineFiles.filter((f) => ((f.mode ?? 0o644) & 0o111) !== 0).map((f) => `/${f.name}`);
  const py = '"${PERFMINE_PYTHON:-python3}"';
  const lockFiles = lock ? lockFileNames(lock) : [];
  const hashed = lockFiles.includes('requirements.lock');
  const constrained = lockFiles.includes('constraints.txt');
  const wheels = input.wheels ?? [];
  // the build script's own pip runs (its build requirements) find the folder's locked files, and no index
  const offline = wheels.length > 0 ? `PIP_NO_INDEX=1 PIP_FIND_LINKS=${IMAGE_WHEELS} ` : '';
  const build = [
    `${offline}${constrained ? 'PIP_CONSTRAINT=/perfmine/constraints.txt ' : ''}bash ${SCRIPT_PATH}`,
    `bash ${SEAL_PATH} modules`,
    ...(lock ? [`${py} ${LOCK_READER_PATH} check /perfmine/lock.json`] : []),
  ];
  return [
    `# ${row.instance_id}: the environment perfmine verified and measured, rebuilt from this folder alone: the`,
    `# repository at the base commit with its history up to it (source/repo.bundle), perfmine-bench,`,
    lock
      ? `# the locked dependencies (requirements.lock, hash-checked), the verified build script, then a check that the installed set is the lock.`
      : '# then the verified build script.',
    `#   docker build -t ${row.image_name} .${wheels.length > 0 ? '   (no package index: the locked files are in wheels/)' : hashed ? '   (--build-arg PIP_INDEX_URL=... for another index than the one locked)' : ''}`,
    ...taskSourceDockerfileLines({ baseImage, sha: row.base_commit }),
    ...packages,
    ...(executables.length > 0 ? [`RUN chmod 0755 ${executables.join(' ')}`] : []),
    ...(input.pythonVersion ? [`ENV PERFMINE_PYTHON=python${input.pythonVersion}`] : []),
    ...lockInstallLines(lock, lockFiles, wheels, py),
    `COPY docker_build.sh ${SCRIPT_PATH}`,
    `WORKDIR ${REPO_DIR}`,
    `RUN ${build.join(' && ')}`,
    '',
  ].join('\n');
}

/** Where the image keeps the folder's locked files (`wheels/`). */
const IMAGE_WHEELS = `/perfmine/${WHEELS_DIR}`;

/**
 * The lock's lines: its files copied; the folder's locked files, when it carries them, copied and
 * checked (each has the lock's SHA-256, and there is no other); then the index's distributions
 * installed hash-checked without dependencies, from those files with no index, else from
 * PIP_INDEX_URL.
 */
function lockInstallLines(
  lock: EnvironmentLock | null,
  lockFiles: readonly string[],
  wheels: readonly VendoredFile[],
  py: string,
): string[] {
  if (!lock) return [];
  const carried = wheels.length > 0;
  const install = `RUN ${py} -m pip install --no-cache-dir ${carried ? `--no-index --find-links ${IMAGE_WHEELS} ` : ''}--require-hashes --no-deps -r /perfmine/requirements.lock`;
  const only = `{ [ "$(ls -A | wc -l)" -eq ${wheels.length} ] || { echo '${WHEELS_DIR}/ holds files ${WHEELS_CHECK_FILE} does not name' >&2; exit 1; }; }`;
  return [
    `COPY ${[...lockFiles, ...(carried ? [WHEELS_CHECK_FILE] : [])].join(' ')} /perfmine/`,
    ...(carried
      ? [
          `COPY ${WHEELS_DIR}/ ${IMAGE_WHEELS}/`,
          `RUN cd ${IMAGE_WHEELS} && sha256sum --strict --quiet --check /perfmine/${WHEELS_CHECK_FILE} && ${only}`,
        ]
      : []),
    ...(!lockFiles.includes('requirements.lock') ? [] : carried ? [install] : [`ARG PIP_INDEX_URL=${indexUrlOf(lock)}`, install]),
  ];
}

/** The lock's files in a task folder: requirements.lock (hash-checked pins), constraints.txt (build requirements), lock.json. */
export function lockFileNames(lock: EnvironmentLock): string[] {
  return [
    ...(lock.distributions.some((d) => d.source === 'index') ? ['requirements.lock'] : []),
    ...(buildConstraints(lock).trim() ? ['constraints.txt'] : []),
    'lock.json',
  ];
}

/**
 * The index a rebuild installs the lock from by default: the one it was served from when that is
 * a public (https) index, else PyPI (a loopback or a directory index, such as the demo's, is given
 * with `--build-arg PIP_INDEX_URL=`). The hashes pin the files whichever index serves them.
 */
function indexUrlOf(lock: EnvironmentLock): string {
  return lock.upstream && /^https:\/\//.test(lock.upstream) ? lock.upstream : 'https://pypi.org/simple/';
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
  return json(
    checkedMetadata({
      task_format: TASK_FORMAT,
      ...taskIdentity(row),
      category_source: input.provenance.categorySource,
      category_reason: input.provenance.categoryReason,
      problem_statement: { source: input.provenance.statementSource, leak_check: input.provenance.leakCheckBasis },
      image_name: row.image_name,
      repository_url: input.repoUrl,
      environment: {
        base_image: input.baseImage,
        verified_image: input.verifiedImage,
        build_script_source: input.scriptSource,
        python_version: input.pythonVersion,
        package_tier: input.packageTier ?? null,
        sealed_history: input.sealedHistory,
        lock: input.lock
          ? {
              python: input.lock.python,
              index_cutoff: input.lock.cutoff,
              index: input.lock.upstream,
              distributions: input.lock.distributions.length,
              from_index: input.lock.distributions.filter((d) => d.source === 'index').length,
              files_carried: input.wheels?.length ?? 0,
            }
          : null,
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
    }),
  );
}

/** What the writer writes is what the reader reads: the metadata checked against the folder's schema (tasks/folder) before it is written. */
function checkedMetadata<T extends object>(metadata: T): T {
  const checked = metadataSchema.safeParse(metadata);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw new Error(`metadata.json as written does not match the task folder's schema: ${issue.path.join('.')}: ${issue.message}`);
  }
  return metadata;
}

/** The task as an agent harness gives it: where the code is, how to measure, what to change, how it is judged, the statement. */
export function instructionMarkdown(row: TaskRow, measuringTool: string): string {
  return [
    `# ${row.instance_id}`,
    '',
    `The repository ${row.repo} is checked out at ${REPO_DIR} (commit ${row.base_commit}, with its history up to that commit only) in the environment this folder's Dockerfile builds`,
    `(\`docker build -t ${row.image_name} .\`; the package installed from source by docker_build.sh).`,
    '',
    "Make the code described below faster. Your change is judged by the speedup of the repository's asv benchmarks against the",
    "unchanged repository, compared with the expert's change; it fails when a test that passes now stops passing or a benchmark",
    'function returns a different value. Do not edit the benchmarks or the tests. Hand in your change as a unified diff',
    `against ${row.base_commit}; \`bash score.sh your.patch\` scores it.`,
    '',
    '## Measuring',
    '',
    withNewline(measuringTool),
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

/** Every text file of the folder by its path (the sealed history's bundles are the blobs beside it). */
export function taskFiles(input: TaskFileInput): Record<string, string> {
  const named: Record<(typeof TASK_TEXT_FILES)[number], string> = {
    Dockerfile: taskDockerfile(input),
    'docker_build.sh': withNewline(input.row.build_script),
    'expert.patch': input.row.patch,
    'instruction.md': instructionMarkdown(input.row, input.measuringTool),
    'metadata.json': metadataJson(input),
    'problem_statement.md': withNewline(input.row.problem_statement),
    'score.sh': scoreScript(input.row),
    'workloads.json': workloadsJson(input.workloads),
  };
  const files: Record<string, string> = { ...named };
  for (const f of input.perfmineFiles) files[f.name] = textOf(f);
  if (input.lock) {
    const names = lockFileNames(input.lock);
    if (names.includes('requirements.lock'))
      files['requirements.lock'] = requirementsLock(input.lock, `${input.row.instance_id}: the environment perfmine measured`);
    if (names.includes('constraints.txt')) files['constraints.txt'] = buildConstraints(input.lock);
    files['lock.json'] = json(input.lock);
  }
  if (input.wheels && input.wheels.length > 0) files[WHEELS_CHECK_FILE] = wheelsCheckFile(input.wheels);
  return files;
}

/** The sealed history's paths in the folder (`source/repo.bundle`, `source/modules/NAME.bundle`). */
export function isSealedHistoryPath(path: string): boolean {
  return path.startsWith(`${TASK_SOURCE_DIR}/`) && path.endsWith('.bundle');
}
