import { z } from 'zod';

/**
 * A dataset row, compatible with SWE-bench-style harnesses (instance_id, repo, base_commit,
 * patch, problem_statement, ...) plus perfmine's performance fields. Pure assembly; the key
 * order below is the order in tasks.jsonl.
 */
export const taskRowSchema = z
  .object({
    instance_id: z.string(),
    repo: z.string(),
    pull_number: z.number().int().positive(),
    base_commit: z.string(),
    merge_commit: z.string(),
    created_at: z.string(),
    merged_at: z.string(),
    problem_statement: z.string(),
    patch: z.string(),
    image_name: z.string(),
    build_script: z.string(),
    workloads: z.object({ count: z.number().int().nonnegative(), names: z.array(z.string()) }).strict(),
    /** Geometric mean of per-workload speedups (base / expert): over all workloads, and over the improved ones. */
    expert_speedup: z.object({ all: z.number().nullable(), improved: z.number().nullable() }).strict(),
    category: z.string().nullable(),
    difficulty: z.string().nullable(),
    /** The LLM model that classified it, or `heuristic`. */
    classifier: z.string(),
    month: z.string().regex(/^\d{4}-\d{2}$/),
    /** The task's environment image in a registry by digest (`perfmine publish --registry`); absent or null: not pushed. */
    docker_image: z.string().nullable().optional(),
    /** The base image the task's Dockerfile starts from, in that registry by digest. */
    base_image: z.string().nullable().optional(),
  })
  .strict();
export type TaskRow = z.infer<typeof taskRowSchema>;

/** `owner__name-N`, SWE-bench's instance id. */
export function instanceId(repo: string, number: number): string {
  return `${repo.replace('/', '__')}-${number}`;
}
