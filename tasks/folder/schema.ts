import { z } from 'zod';

/**
 * The task folder (`out/YYYY-MM/<instance_id>/`) as one versioned schema: what its JSON files hold,
 * in one place, for the one writer (stages/emit/task-files.ts, pipeline/services/environments/
 * harness-files.ts) and the one reader (read.ts) every consumer uses.
 *
 * Versions (metadata.json `task_format`):
 * - 1 (no `task_format`): folders emitted before the field existed. Read; the features of its
 *   perfmine-bench are not recorded, and its recorded `paired.alpha` is the final analysis's.
 * - 2: `task_format: 2`; task.json records `features` (what its perfmine-bench can do) and the
 *   protocol records `configuredAlpha` (validate.paired.alpha as configured, the looks' share
 *   included).
 * A folder of a later version than this perfmine knows is refused, naming both versions.
 */

export const TASK_FORMAT = 2;

/** What the folder's perfmine-bench can do beyond `compare`, recorded in task.json (version 2 on). */
export const BENCH_FEATURES = ['rebuild-working'] as const;
export type BenchFeature = (typeof BENCH_FEATURES)[number];

/** The files every task folder has (besides perfmine's files, the lock's and the sealed history). */
export const TASK_TEXT_FILES = [
  'Dockerfile',
  'docker_build.sh',
  'expert.patch',
  'instruction.md',
  'metadata.json',
  'problem_statement.md',
  'score.sh',
  'workloads.json',
] as const;

/** The folder's files that are the task's texts, not the environment's build context (all but the Dockerfile and the build script). */
export const NOT_ENVIRONMENT_FILES: ReadonlySet<string> = new Set(
  TASK_TEXT_FILES.filter((f) => f !== 'Dockerfile' && f !== 'docker_build.sh'),
);

/** Where perfmine-bench's facts of the task are (base commit, asv config, interpreter, protocol). */
export const BENCH_TASK_FILE = 'perfmine/bench/task.json';

/** The sealed history's main bundle: the repository at the base commit and its ancestors. */
export const REPO_BUNDLE = 'source/repo.bundle';

const count = z.number().int().nonnegative();

export const metadataSchema = z.looseObject({
  task_format: z.number().int().positive().optional(),
  instance_id: z.string().min(1),
  repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'owner/name'),
  pull_number: z.number().int().positive(),
  base_commit: z.string().regex(/^[0-9a-f]{40}$/, 'a 40-digit commit'),
  month: z.string().nullable().optional(),
  image_name: z.string().optional(),
  environment: z.looseObject({
    base_image: z.string().min(1),
    python_version: z.string().nullable().optional(),
  }),
  workloads: z
    .looseObject({
      count: count.optional(),
      improved: z.array(z.string()).default([]),
      worsened: z.array(z.string()).default([]),
    })
    .optional(),
  measurement: z.looseObject({
    engine: z.string(),
    protocol: z.record(z.string(), z.unknown()).nullable().optional(),
    false_positives: z.object({ flagged: count.nullable(), compared: count.nullable() }).optional(),
  }),
  /** A published folder's images (`publish --registry`): each base the Dockerfile started from, by its digest reference. */
  images: z.object({ environment: z.string(), bases: z.record(z.string(), z.string()) }).optional(),
});
export type TaskMetadata = z.infer<typeof metadataSchema>;

export const workloadSchema = z.looseObject({
  name: z.string().min(1),
  speedup: z.number().nullable().optional(),
  perfmine_verdict: z.looseObject({
    change: z.string(),
    normalized_median: z.number().nullable().optional(),
    noise: z.number().nullable().optional(),
    usable_pairs: count.optional(),
    minimum_detectable_speedup: z.number().nullable().optional(),
  }),
});
export const workloadsSchema = z.array(workloadSchema);
export type TaskWorkload = z.infer<typeof workloadSchema>;

export const benchTaskSchema = z.looseObject({
  base_commit: z.string().regex(/^[0-9a-f]{40}$/, 'a 40-digit commit'),
  asv_config: z.string().min(1),
  build_script: z.string().optional(),
  python: z.string().nullable().optional(),
  protocol: z.record(z.string(), z.unknown()).default({}),
  features: z.array(z.string()).optional(),
});
export type BenchTaskFile = z.infer<typeof benchTaskSchema>;
