import PQueue from 'p-queue';
import { Ledger, type Completion, type LedgerRow, type PlannedItem } from '../cache/ledger.js';
import { ConfigError, InternalError, summarize, type ErrorKind } from './errors.js';
import type { Emitter } from './events.js';
import { hashOf } from './hash.js';
import { availableParallelism } from 'node:os';
import { GroupCommit } from './group-commit.js';
import { runRemote, runsRemotely } from './executor/run-remote.js';
import { queueSizes } from './queues.js';
import { checkOnlyServices, WouldChange } from './services/check-only.js';
import type { Scope } from './scope.js';
import type { AnyStage, BatchResult, ItemContext, Outcome, PipelineContext, WorkItem } from './stage.js';

export interface StageReport {
  readonly stage: string;
  /** Items in scope. */
  readonly planned: number;
  /** Items already decided with the same input and stage version (not run again). */
  readonly reused: number;
  /** Items processed in this run. */
  readonly ran: number;
  /** Items a dry run would process. */
  readonly wouldRun: number;
  /** Items left pending because the run was interrupted. */
  readonly notStarted: number;
  /** Items done (passed on to the next stage), including reused ones. */
  readonly done: number;
  /** Dropped items by reason, including reused ones. */
  readonly dropped: Readonly<Record<string, number>>;
  /** Failed items by reason. */
  readonly failed: Readonly<Record<string, number>>;
  /** Failures by error kind. */
  readonly failedKinds: Readonly<Partial<Record<ErrorKind, number>>>;
  readonly durationMs: number;
  /** What a dry run could not check without changing something (e.g. an image a real run would build first). */
  readonly notes?: readonly string[];
}

export interface RunnerEvents {
  'stage-start': { readonly stage: string; readonly planned: number; readonly toRun: number; readonly skipped: number };
  'item-end': {
    readonly stage: string;
    readonly key: string;
    readonly status: 'done' | 'dropped' | 'failed';
    readonly reason: string | null;
    readonly durationMs: number;
  };
  'stage-end': { readonly report: StageReport };
}

export interface RunStageOptions {
  /** Run items again even when done with the same input and version. */
  readonly force?: boolean;
  /**
   * Check and count: the stage's preflight runs with a check-only Docker adapter (nothing is
   * built, tagged or removed), it plans, and nothing is run or recorded. Give it a context over
   * a store snapshot (openStoreSnapshot) so that planning writes nothing either.
   */
  readonly dryRun?: boolean;
  /** Aborted on the first SIGINT: no new item starts; in-flight ones finish and are recorded. */
  readonly drain?: AbortSignal;
  readonly events?: Emitter<RunnerEvents>;
  /** Items at once; default: the size of the stage's outside-system queue. */
  readonly concurrency?: number;
  /** Items per `runBatch` call and per transaction, for stages that decide in batches. */
  readonly batchSize?: number;
}

/**
 * Items per `runBatch` call and per transaction: large enough that a commit's fixed cost and a
 * range scan's set-up are spread thin (30,000 rule decisions commit in 15 transactions instead of
 * about 470), small enough that an interrupt or a progress line waits for at most a fraction of
 * a second.
 */
export const DEFAULT_BATCH_SIZE = 2000;

/** Why an item is (or is not) run. Pure: the decision that makes every stage resumable. */
export function needsRun(
  existing: Pick<LedgerRow, 'status' | 'inputHash' | 'stageVersion'> | undefined,
  inputHash: string,
  version: number,
  force: boolean,
): boolean {
  if (force || !existing) return true;
  if (existing.status !== 'done' && existing.status !== 'dropped') return true;
  return existing.inputHash !== inputHash || existing.stageVersion !== version;
}

/**
 * Runs one stage over its planned items. Each item's result (its rows and its ledger entry) is
 * committed atomically, together with the results of items that finished at the same time, so a
 * crash loses at most the items in flight or not yet committed, which run again next time. A
 * failing item is recorded and the others go on; a configuration error stops the stage after
 * the items in flight.
 */
export async function runStage(ctx: PipelineContext, stage: AnyStage, scope: Scope, options: RunStageOptions = {}): Promise<StageReport> {
  const started = Date.now();
  const notes: string[] = [];
  if (options.dryRun) {
    // The same checks as a real run, through adapters that change nothing outside: a stage
    // stops with the same ConfigError (exit 2) where the real run would.
    ctx = { ...ctx, services: checkOnlyServices(ctx.services) };
    try {
      await stage.preflight?.(ctx, scope);
    } catch (error) {
      if (!(error instanceof WouldChange)) throw error;
      notes.push(`${stage.name}: ${error.message}; the checks after that step were not made`);
    }
  } else {
    await stage.preflight?.(ctx, scope);
  }
  const items = await stage.plan(ctx, scope);

  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.key)) throw new InternalError('duplicate-item', `stage ${stage.name} planned item ${item.key} twice`);
    seen.add(item.key);
  }

  const planned = items.map((item) => ({ item, entry: toPlanned(item) }));
  const toRun: typeof planned = [];
  const done = { count: 0 };
  const dropped: Record<string, number> = {};
  const failed: Record<string, number> = {};
  const failedKinds: Partial<Record<ErrorKind, number>> = {};
  let reused = 0;

  const decided = ctx.ledger.decisions(stage.name);
  for (const p of planned) {
    const row = decided.get(p.item.key);
    if (needsRun(row, p.entry.inputHash, stage.version, options.force ?? false)) {
      toRun.push(p);
    } else if (row) {
      reused += 1;
      if (row.status === 'done') done.count += 1;
      else bump(dropped, row.reason ?? 'unspecified');
    }
  }

  const finish = (counts: Pick<StageReport, 'ran' | 'wouldRun' | 'notStarted'>): StageReport => {
    const report: StageReport = {
      stage: stage.name,
      planned: items.length,
      reused,
      ...counts,
      done: done.count,
      dropped,
      failed,
      failedKinds,
      durationMs: Date.now() - started,
      ...(notes.length > 0 ? { notes } : {}),
    };
    options.events?.emit('stage-end', { report });
    return report;
  };

  if (options.dryRun) return finish({ ran: 0, wouldRun: toRun.length, notStarted: 0 });

  // Rows that planning would leave as they are are not written again (the upsert's WHERE would
  // skip them too, but 30,000 no-op upserts cost about 4% of a rule stage's run).
  ctx.ledger.plan(
    stage.name,
    stage.version,
    planned.filter((p) => Ledger.planChanges(decided.get(p.item.key), p.entry, stage.version)).map((p) => p.entry),
    ctx.runId,
  );
  options.events?.emit('stage-start', { stage: stage.name, planned: items.length, toRun: toRun.length, skipped: reused });

  const concurrency = options.concurrency ?? queueSizes(ctx.config, availableParallelism())[stage.system];
  const pool = new PQueue({ concurrency });
  let ran = 0;
  let notStarted = 0;
  let configError: ConfigError | undefined;

  const recordFailure = (itemCtx: ItemContext, entry: PlannedItem, error: unknown, t0: number) => {
    const summary = summarize(error);
    ctx.ledger.fail(stage.name, stage.version, entry, summary, ctx.runId);
    bump(failed, summary.reason);
    failedKinds[summary.kind] = (failedKinds[summary.kind] ?? 0) + 1;
    itemCtx.log.warn({ kind: summary.kind, reason: summary.reason, err: summary.message }, 'item failed');
    if (error instanceof ConfigError && !configError) configError = error;
    options.events?.emit('item-end', {
      stage: stage.name,
      key: itemCtx.key,
      status: 'failed',
      reason: summary.reason,
      durationMs: Date.now() - t0,
    });
  };

  interface Finished {
    readonly itemCtx: ItemContext;
    readonly item: WorkItem<unknown>;
    readonly entry: PlannedItem;
    readonly outcome: Outcome<unknown>;
    readonly t0: number;
  }
  /** The status an item's row has once `plan` has run: reset to pending when its input or version changed. */
  const statusAfterPlan = (entry: PlannedItem) => {
    const row = decided.get(entry.key);
    return row && row.inputHash === entry.inputHash && row.stageVersion === stage.version ? row.status : 'pending';
  };
  // Results of items that finish together are committed together (their rows and ledger entries).
  const committer = new GroupCommit<Finished>(
    ctx.db,
    ({ item, entry, outcome }) => {
      stage.persist?.(ctx.db, item, outcome);
      ctx.ledger.completeMany(
        stage.name,
        stage.version,
        [{ item: entry, completion: completion(outcome), previous: statusAfterPlan(entry) }],
        ctx.runId,
      );
    },
    ({ itemCtx, entry, outcome, t0 }, error) => {
      if (error !== undefined) return recordFailure(itemCtx, entry, error, t0);
      if (outcome.status === 'done') done.count += 1;
      else bump(dropped, outcome.reason);
      options.events?.emit('item-end', {
        stage: stage.name,
        key: itemCtx.key,
        status: outcome.status,
        reason: outcome.status === 'dropped' ? outcome.reason : null,
        durationMs: Date.now() - t0,
      });
    },
  );

  const runOne = async ({ item, entry }: (typeof planned)[number]) => {
    if (options.drain?.aborted || configError || ctx.signal.aborted) {
      notStarted += 1;
      return;
    }
    ran += 1;
    const t0 = Date.now();
    const itemCtx = itemContext(ctx, stage.name, item.key);
    let outcome: Outcome<unknown>;
    try {
      outcome = await stage.run(itemCtx, item);
    } catch (error) {
      recordFailure(itemCtx, entry, error, t0);
      return;
    }
    committer.add({ itemCtx, item, entry, outcome, t0 });
  };

  const recorded = (p: (typeof planned)[number], outcome: Outcome<unknown>, t0: number) => {
    if (outcome.status === 'done') done.count += 1;
    else bump(dropped, outcome.reason);
    options.events?.emit('item-end', {
      stage: stage.name,
      key: p.item.key,
      status: outcome.status,
      reason: outcome.status === 'dropped' ? outcome.reason : null,
      durationMs: Date.now() - t0,
    });
  };

  /**
   * A chunk of items through `runBatch`, its results committed in one transaction (the stage's
   * rows and the ledger's); when that transaction fails, each result is committed alone, so that
   * one bad result never takes the others down.
   */
  const runChunk = async (chunk: typeof toRun) => {
    const t0 = Date.now();
    ran += chunk.length;
    let results: readonly BatchResult<unknown, unknown>[];
    try {
      results = await stage.runBatch!(
        ctx,
        chunk.map((p) => p.item),
      );
    } catch (error) {
      for (const p of chunk) recordFailure(itemContext(ctx, stage.name, p.item.key), p.entry, error, t0);
      return;
    }
    const waiting = new Map(chunk.map((p) => [p.item.key, p]));
    const finished: { p: (typeof planned)[number]; outcome: Outcome<unknown> }[] = [];
    for (const result of results) {
      const p = waiting.get(result.item.key);
      if (!p) continue; // not an item of this chunk, or a second result for one
      waiting.delete(result.item.key);
      if ('error' in result) recordFailure(itemContext(ctx, stage.name, p.item.key), p.entry, result.error, t0);
      else finished.push({ p, outcome: result.outcome });
    }
    const write = (list: typeof finished) => {
      for (const { p, outcome } of list) stage.persist?.(ctx.db, p.item, outcome);
      ctx.ledger.completeMany(
        stage.name,
        stage.version,
        list.map(({ p, outcome }) => ({ item: p.entry, completion: completion(outcome), previous: statusAfterPlan(p.entry) })),
        ctx.runId,
      );
    };
    try {
      ctx.db.transaction(() => write(finished)).immediate();
      for (const { p, outcome } of finished) recorded(p, outcome, t0);
    } catch {
      for (const f of finished) {
        try {
          ctx.db.transaction(() => write([f])).immediate();
        } catch (error) {
          recordFailure(itemContext(ctx, stage.name, f.p.item.key), f.p.entry, error ?? new Error('commit failed'), t0);
          continue;
        }
        recorded(f.p, f.outcome, t0);
      }
    }
    for (const p of waiting.values()) {
      const error = new InternalError('no-batch-result', `stage ${stage.name} decided a batch without item ${p.item.key}`);
      recordFailure(itemContext(ctx, stage.name, p.item.key), p.entry, error, t0);
    }
  };

  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  try {
    if (stage.runBatch && (stage.batched?.(scope) ?? true)) {
      for (let i = 0; i < toRun.length; i += batchSize) {
        if (options.drain?.aborted || configError || ctx.signal.aborted) {
          notStarted += toRun.length - i;
          break;
        }
        await runChunk(toRun.slice(i, i + batchSize));
        // Let signals, timers and progress output run between chunks.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } else if (runsRemotely(ctx, stage)) {
      // executor: slurm — the items run as Slurm jobs; each result is committed as it is ingested
      const t0 = Date.now();
      const counts = await runRemote(ctx, stage, toRun, {
        drain: options.drain,
        itemContext: (key) => itemContext(ctx, stage.name, key),
        commit: (p, outcome) => {
          stage.persist?.(ctx.db, p.item, outcome);
          ctx.ledger.completeMany(
            stage.name,
            stage.version,
            [{ item: p.entry, completion: completion(outcome), previous: statusAfterPlan(p.entry) }],
            ctx.runId,
          );
          recorded(p, outcome, t0);
        },
        fail: (p, error) => recordFailure(itemContext(ctx, stage.name, p.item.key), p.entry, error, t0),
      });
      ran += counts.ran;
      notStarted += counts.notStarted;
    } else {
      await Promise.all(toRun.map((p) => pool.add(() => runOne(p))));
    }
  } finally {
    committer.flush();
  }
  if (configError) throw configError;

  if (stage.finish && !options.drain?.aborted && !ctx.signal.aborted) await stage.finish(ctx, scope);

  return finish({ ran, wouldRun: 0, notStarted });
}

/** The context of one item; its logger (carrying stage and item) is made only if the item logs. */
function itemContext(ctx: PipelineContext, stage: ItemContext['stage'], key: string): ItemContext {
  let log: PipelineContext['log'] | undefined;
  return Object.defineProperty({ ...ctx, stage, key }, 'log', {
    enumerable: true,
    get: () => (log ??= ctx.log.child({ stage, item: key })),
  }) as ItemContext;
}

function completion(outcome: Outcome<unknown>): Completion {
  return {
    status: outcome.status,
    reason: outcome.status === 'dropped' ? outcome.reason : null,
    detail: outcome.detail ?? null,
    output: outcome.output,
  };
}

function toPlanned(item: WorkItem<unknown>): PlannedItem {
  return { key: item.key, repo: item.repo ?? null, at: item.at ?? null, inputHash: hashOf(item.input) };
}

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/** True when any item of these reports failed. */
export function anyFailed(reports: readonly StageReport[]): boolean {
  return reports.some((r) => Object.keys(r.failed).length > 0);
}
