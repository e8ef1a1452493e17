import type { PlannedItem } from '../../cache/ledger.js';
import { ConfigError } from '../errors.js';
import { SlurmAdapter } from '../services/slurm.js';
import type { AnyStage, ItemContext, Outcome, PipelineContext, WorkItem } from '../stage.js';
import { SlurmExecutor, type RemoteJob } from './slurm-executor.js';

/** Executors running now, so that a hard stop (second Ctrl-C) can cancel their jobs before the process exits. */
const active = new Set<SlurmExecutor>();

/** For the hard-stop handler: cancels the Slurm jobs of every executor running in this process. */
export function cancelRemoteJobsSync(): void {
  for (const executor of active) executor.cancelAllSync();
}

export interface RemoteIo {
  readonly drain?: AbortSignal | undefined;
  readonly itemContext: (key: string) => ItemContext;
  /** Writes the item's outcome (stage rows and ledger); called inside the ingest transaction. */
  readonly commit: (p: { item: WorkItem<unknown>; entry: PlannedItem }, outcome: Outcome<unknown>) => void;
  readonly fail: (p: { item: WorkItem<unknown>; entry: PlannedItem }, error: unknown) => void;
  /** Adapter to use (tests); default: the Slurm commands on PATH. */
  readonly slurm?: SlurmAdapter;
}

/** Whether this stage's items go to Slurm in this context; says so when a container stage cannot yet. */
export function runsRemotely(ctx: PipelineContext, stage: AnyStage): boolean {
  if (ctx.config.executor.kind !== 'slurm') return false;
  if (stage.remote !== undefined) return true;
  if (stage.system === 'docker')
    ctx.log.warn(
      { stage: stage.name },
      `executor slurm: stage ${stage.name} has no Slurm worker in this version; its items run on this machine's Docker engine`,
    );
  return false;
}

/**
 * The stage runner's hook for `executor: slurm`: the items become jobs, and each result comes
 * back through `commit` in the transaction that marks its job ingested.
 */
export async function runRemote(
  ctx: PipelineContext,
  stage: AnyStage,
  items: readonly { item: WorkItem<unknown>; entry: PlannedItem }[],
  io: RemoteIo,
): Promise<{ ran: number; notStarted: number }> {
  const remote = stage.remote!;
  const byKey = new Map(items.map((p) => [p.item.key, p]));
  const jobs: RemoteJob[] = [];
  for (const p of items) {
    try {
      jobs.push({
        key: p.item.key,
        inputHash: p.entry.inputHash,
        kind: remote.kind,
        payload: remote.payload(io.itemContext(p.item.key), p.item),
      });
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      io.fail(p, error);
    }
  }
  const executor = new SlurmExecutor({
    db: ctx.db,
    slurm: io.slurm ?? new SlurmAdapter(),
    config: ctx.config.executor.slurm,
    stage: stage.name,
    runId: ctx.runId,
    log: ctx.log,
    drain: io.drain,
    hard: ctx.signal,
  });
  active.add(executor);
  try {
    const report = await executor.run(jobs, {
      ingest(key, output) {
        const p = byKey.get(key)!;
        io.commit(p, remote.ingest(io.itemContext(key), output, p.item));
      },
      fail(key, error) {
        io.fail(byKey.get(key)!, error);
      },
    });
    ctx.log.info({ stage: stage.name, ...report }, 'slurm executor: stage finished');
    return { ran: items.length - report.notStarted - report.cancelled, notStarted: report.notStarted + report.cancelled };
  } finally {
    active.delete(executor);
  }
}
