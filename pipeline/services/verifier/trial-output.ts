import { z } from 'zod';

/**
 * What a verifier's run leaves in /logs/verifier, read as its reader must: reward.json (Harbor's
 * flat object of numbers) and perfmine-verify.json (perfmine_verify.py's details; only the parts
 * perfmine reads are checked, the rest is kept as it is). Pure.
 */

export const rewardSchema = z.record(z.string(), z.number());

const findingSchema = z.object({
  rule: z.string(),
  severity: z.enum(['hack', 'suspect']),
  path: z.string().nullable(),
  line: z.number().nullable().optional(),
  message: z.string(),
});

const workloadSchema = z
  .object({
    name: z.string(),
    task_improved: z.boolean(),
    expert_speedup: z.number().nullable().optional(),
    expert_verdict: z.string().nullable().optional(),
    reference_speedup: z.number().nullable().optional(),
    reference_verdict: z.string().nullable().optional(),
    speedup: z.number().nullable(),
    reported_speedup: z.number().nullable().optional(),
    verdict: z.string(),
    reason: z.string().nullable().optional(),
    interval: z.tuple([z.number(), z.number()]).nullable().optional(),
    mds: z.number().nullable().optional(),
    pairs: z.number().nullable().optional(),
    faster_pairs: z.number().nullable().optional(),
    p_value: z.number().nullable().optional(),
    median_log: z.number().nullable().optional(),
    standard_error: z.number().nullable().optional(),
    df: z.number().nullable().optional(),
    /** The hack checks' reading of a task-improved workload (memo_signals): why it was judged memoised, and their numbers. */
    memo: z.object({ memoised: z.boolean().optional(), why: z.string().optional() }).passthrough().nullable().optional(),
  })
  .passthrough();

const failureSchema = z.object({ check: z.string(), message: z.string() }).passthrough();

export const detailsSchema = z
  .object({
    tool: z.literal('perfmine-verify'),
    schema: z.number(),
    instance_id: z.string().optional(),
    failure: failureSchema.nullable().optional(),
    error: failureSchema.nullable().optional(),
    change: z
      .object({ paths: z.array(z.string()), dropped: z.array(z.string()) })
      .passthrough()
      .optional(),
    checks: z.record(z.string(), z.unknown()).optional(),
    findings: z.array(findingSchema).default([]),
    workloads: z.array(workloadSchema).default([]),
    timing: z.record(z.string(), z.number()).default({}),
    reward: rewardSchema.optional(),
  })
  .passthrough();

export type TrialDetails = z.infer<typeof detailsSchema>;
export type TrialWorkload = z.infer<typeof workloadSchema>;
export type TrialFinding = z.infer<typeof findingSchema>;

export interface TrialOutput {
  readonly reward: Readonly<Record<string, number>>;
  /** null when the verifier wrote none (killed at its time limit: reward.json is test.sh's provisional one). */
  readonly details: TrialDetails | null;
  readonly agentPatch: string | null;
  readonly log: string;
}

/** Why a run's output is not what a verifier writes (the run is the verifier's problem, not the change's). */
export class TrialOutputError extends Error {
  override readonly name = 'TrialOutputError';
}

function text(files: ReadonlyMap<string, Buffer>, name: string): string | null {
  for (const [path, data] of files) if (path.endsWith(`/${name}`) || path === name) return data.toString('utf8');
  return null;
}

export function parseTrialOutput(files: ReadonlyMap<string, Buffer>): TrialOutput {
  const log = text(files, 'test-stdout.txt') ?? '';
  const rewardText = text(files, 'reward.json');
  if (rewardText === null) throw new TrialOutputError(`the verifier wrote no reward.json:\n${log.slice(-2000)}`);
  let reward: Record<string, number>;
  try {
    reward = rewardSchema.parse(JSON.parse(rewardText));
  } catch (error) {
    throw new TrialOutputError(`reward.json is not a flat object of numbers: ${(error as Error).message}`);
  }
  if (typeof reward['reward'] !== 'number') throw new TrialOutputError('reward.json has no reward');
  const detailsText = text(files, 'perfmine-verify.json');
  let details: TrialDetails | null = null;
  if (detailsText !== null) {
    const parsed = detailsSchema.safeParse(JSON.parse(detailsText));
    if (!parsed.success)
      throw new TrialOutputError(
        `perfmine-verify.json: ${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      );
    details = parsed.data;
  }
  return { reward, details, agentPatch: text(files, 'agent.patch'), log };
}
