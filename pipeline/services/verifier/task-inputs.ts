import { z } from 'zod';
import type { BlobRef } from '../../../cache/blobs.js';
import { WHEELS_DIR } from '../../concepts/vendored-wheels.js';

/** What the inputs are read from (an emitted task, or a task folder read from disk). */
interface Source {
  readonly row: { readonly instance_id: string };
  readonly files: Readonly<Record<string, string>>;
  readonly blobs: Readonly<Record<string, BlobRef>>;
}

/**
 * What a Harbor task is made from, read from a perfmine task folder's own files (the folder is
 * the product: nothing else is consulted): perfmine-bench's task.json (base commit, asv config,
 * interpreter, validate's protocol), workloads.json (every workload's expert speedup and
 * verdict), the bundles of the sealed history. Parsed with zod at this edge. Pure.
 */

const benchTaskSchema = z.object({
  base_commit: z.string().regex(/^[0-9a-f]{40}$/),
  asv_config: z.string().min(1),
  python: z.string().nullable().optional(),
  protocol: z.record(z.string(), z.unknown()).default({}),
});

const workloadSchema = z.object({
  name: z.string(),
  speedup: z.number().nullable(),
  perfmine_verdict: z.object({ change: z.string() }),
});

export interface HarborTaskInputs {
  readonly baseCommit: string;
  readonly asvConfig: string;
  readonly python: string | null;
  readonly protocol: Readonly<Record<string, unknown>>;
  /** validate's measurement time of the task (ms), when recorded. */
  readonly measuredMs: number | null;
  readonly workloads: readonly { readonly name: string; readonly speedup: number | null; readonly verdict: string }[];
  /** The folder's files the environment's Dockerfile copies (all but the task's own texts). */
  readonly environmentFiles: readonly string[];
  /** The sealed history's bundles (`source/...`). */
  readonly bundles: readonly string[];
  /** constraints.txt, when the lock has build requirements. */
  readonly constraints: boolean;
  /** The lock's files the folder carries (`wheels/...`): what every build finds with no index. */
  readonly wheels: readonly string[];
  /** The environment's perfmine-bench knows `compare --rebuild-working`. */
  readonly rebuildWorking: boolean;
}

export class HarborExportError extends Error {
  override readonly name = 'HarborExportError';
}

/** The task folder's files that are the task's texts, not the environment's build context. */
const NOT_ENVIRONMENT = new Set(['expert.patch', 'instruction.md', 'metadata.json', 'problem_statement.md', 'score.sh', 'workloads.json']);

function parsed<T>(task: Source, name: string, schema: z.ZodType<T>): T {
  const text = task.files[name];
  if (text === undefined) throw new HarborExportError(`${task.row.instance_id}: the task folder has no ${name}`);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new HarborExportError(`${task.row.instance_id}/${name}: not JSON: ${(error as Error).message}`);
  }
  const result = schema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new HarborExportError(
      `${task.row.instance_id}/${name}: ${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return result.data;
}

export function harborTaskInputs(task: Source): HarborTaskInputs {
  const bench = parsed(task, 'perfmine/bench/task.json', benchTaskSchema);
  const workloads = parsed(task, 'workloads.json', z.array(workloadSchema));
  if (!task.files['Dockerfile'] || !task.files['docker_build.sh'] || !task.files['expert.patch'])
    throw new HarborExportError(`${task.row.instance_id}: the task folder lacks its Dockerfile, docker_build.sh or expert.patch`);
  const bundles = Object.keys(task.blobs)
    .filter((p) => p.startsWith('source/') && p.endsWith('.bundle'))
    .sort();
  const wheels = Object.keys(task.blobs)
    .filter((p) => p.startsWith(`${WHEELS_DIR}/`))
    .sort();
  if (!bundles.includes('source/repo.bundle'))
    throw new HarborExportError(`${task.row.instance_id}: the task folder has no source/repo.bundle`);
  const measured = bench.protocol['measuredMs'];
  return {
    baseCommit: bench.base_commit,
    asvConfig: bench.asv_config,
    python: bench.python ?? null,
    protocol: bench.protocol,
    measuredMs: typeof measured === 'number' && Number.isFinite(measured) && measured > 0 ? measured : null,
    workloads: workloads.map((w) => ({ name: w.name, speedup: w.speedup, verdict: w.perfmine_verdict.change })),
    environmentFiles: [...Object.keys(task.files).filter((f) => !NOT_ENVIRONMENT.has(f)), ...Object.keys(task.blobs)].sort(),
    bundles,
    constraints: task.files['constraints.txt'] !== undefined,
    wheels,
    rebuildWorking: (task.files['perfmine/bench/perfmine_bench.py'] ?? '').includes('--rebuild-working'),
  };
}
