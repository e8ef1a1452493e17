import { geometricMean } from '../../pipeline/concepts/asv/metrics.js';
import type { StoredWorkloadVerdict } from '../../cache/measurements.js';
import { normalizeInstant } from '../../pipeline/window.js';

export { instanceId, taskRowSchema, type TaskRow } from '../../pipeline/concepts/records/task-row.js';
import { instanceId, type TaskRow } from '../../pipeline/concepts/records/task-row.js';

/** The task image's name from the configured pattern (Docker wants lowercase). */
export function imageNameOf(pattern: string, repo: string, number: number): string {
  const [owner, name] = repo.split('/') as [string, string];
  return pattern.replaceAll('{owner}', owner).replaceAll('{name}', name).replaceAll('{number}', String(number)).toLowerCase();
}

export interface RowInput {
  readonly repo: string;
  readonly number: number;
  readonly baseSha: string;
  readonly mergeSha: string;
  readonly createdAt: string;
  readonly mergedAt: string;
  readonly problemStatement: string;
  readonly patch: string;
  readonly imageName: string;
  readonly buildScript: string;
  readonly workloads: readonly StoredWorkloadVerdict[];
  readonly category: string | null;
  readonly difficulty: string | null;
  readonly classifier: string;
}

/** Names sorted by code point (byte order of UTF-8), so rows never depend on locale. */
function sorted(names: Iterable<string>): string[] {
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export function assembleRow(input: RowInput): TaskRow {
  const speedups = input.workloads.map((w) => w.speedup).filter((s): s is number => typeof s === 'number' && Number.isFinite(s) && s > 0);
  const improved = input.workloads
    .filter((w) => w.paired.change === 'improved')
    .map((w) => w.speedup)
    .filter((s): s is number => typeof s === 'number' && Number.isFinite(s) && s > 0);
  const mergedAt = normalizeInstant(input.mergedAt);
  return {
    instance_id: instanceId(input.repo, input.number),
    repo: input.repo,
    pull_number: input.number,
    base_commit: input.baseSha,
    merge_commit: input.mergeSha,
    created_at: normalizeInstant(input.createdAt),
    merged_at: mergedAt,
    problem_statement: input.problemStatement,
    patch: input.patch,
    image_name: input.imageName,
    build_script: input.buildScript,
    workloads: { count: input.workloads.length, names: sorted(input.workloads.map((w) => w.workload)) },
    expert_speedup: { all: geometricMean(speedups), improved: geometricMean(improved) },
    category: input.category,
    difficulty: input.difficulty,
    classifier: input.classifier,
    month: mergedAt.slice(0, 7),
    // named when published with a registry (publish --registry)
    docker_image: null,
    base_image: null,
  };
}

/** Rows in dataset order: by instance_id (code point order). */
export function sortRows(rows: readonly TaskRow[]): TaskRow[] {
  return [...rows].sort((a, b) => (a.instance_id < b.instance_id ? -1 : a.instance_id > b.instance_id ? 1 : 0));
}

/** tasks.jsonl: one row per line, sorted, newline-terminated (empty for no rows). */
export function toJsonl(rows: readonly TaskRow[]): string {
  return sortRows(rows)
    .map((r) => `${JSON.stringify(r)}\n`)
    .join('');
}

/** What names a task and where it comes from: the head of its metadata, in the task folder and in exports. */
export function taskIdentity(row: TaskRow) {
  return {
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
  };
}
