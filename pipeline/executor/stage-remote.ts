import { z } from 'zod';
import { openStore } from '../../cache/store.js';
import { createContext } from '../context.js';
import type { AnyStage, ItemContext, Outcome, RemoteStage, Stage, StageName, WorkItem } from '../stage.js';
import { applyWrites, readSlice, seedStore, sliceWrites, type IdMap, type SliceRead, type SliceWrite } from './store-slice.js';
import { nodeSession, type WorkerHandler } from './worker.js';

/**
 * A stage's items as Slurm jobs that run the stage's own `run` on the compute node. The job input
 * carries the item, the coordinator's configuration and the store slice the item reads; on the
 * node `run` gets a context like the coordinator's, with the node's Docker engine and an
 * in-memory store seeded with that slice. The result carries the outcome (with the rows `persist`
 * writes) and the rows `run` wrote into the declared tables; the coordinator writes both in the
 * transaction that marks the job ingested. So an item decides the same way under either executor.
 */
export interface StageRemoteSpec<I, O, R> {
  /** The rows of the store the item reads (the node has nothing else). */
  reads(item: WorkItem<I>): readonly SliceRead[];
  /** The tables the item writes besides its outcome (build attempts, fingerprints, LLM answers). */
  readonly writes: readonly SliceWrite[];
  /** The outcome once the written rows are in the store: puts the coordinator's ids where the node's were. */
  adopt?(outcome: Outcome<O, R>, ids: IdMap, ctx: ItemContext): Outcome<O, R>;
}

const rowsSchema = z.record(z.string(), z.array(z.record(z.string(), z.unknown())));

const stagePayloadSchema = z
  .object({
    item: z.object({ key: z.string(), input: z.unknown(), repo: z.string().nullable(), at: z.string().nullable() }).strict(),
    config: z.unknown(),
    runId: z.number().int().nullable(),
    seed: rowsSchema,
  })
  .strict();

const outcomeSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal('done'), output: z.unknown(), detail: z.string().optional(), rows: z.unknown().optional() }).strict(),
  z
    .object({
      status: z.literal('dropped'),
      reason: z.string(),
      detail: z.string().optional(),
      output: z.unknown().optional(),
      rows: z.unknown().optional(),
    })
    .strict(),
]);

const stageResultSchema = z.object({ outcome: outcomeSchema, writes: rowsSchema, counters: z.record(z.string(), z.number()) }).strict();

/** The worker handler's name for a stage's items. */
export function stageKind(stage: StageName): string {
  return `stage:${stage}`;
}

/** The Slurm side of a stage whose items run its own `run` on the node (see the module comment). */
export function stageRemote<I, O, R>(stage: StageName, spec: StageRemoteSpec<I, O, R>): RemoteStage<I, O, R> {
  return {
    kind: stageKind(stage),
    payload(ctx, item) {
      return {
        item: { key: item.key, input: item.input, repo: item.repo ?? null, at: item.at ?? null },
        config: ctx.config,
        runId: ctx.runId,
        seed: readSlice(ctx.db, spec.reads(item)),
      };
    },
    ingest(ctx, result) {
      const r = stageResultSchema.parse(decodeNumbers(result));
      const ids = applyWrites(ctx.db, spec.writes, r.writes);
      for (const [name, amount] of Object.entries(r.counters)) ctx.metrics.add(name, amount);
      const outcome = r.outcome as Outcome<O, R>;
      return spec.adopt ? spec.adopt(outcome, ids, ctx) : outcome;
    },
    async work(self: Stage<I, O, R>, payload: unknown, signal: AbortSignal) {
      const p = stagePayloadSchema.parse(payload);
      const session = nodeSession(p.config);
      const { credentials, log } = session;
      const config = { ...session.config, db: ':memory:' };
      const db = openStore(':memory:');
      try {
        seedStore(db, p.seed);
        const ctx = createContext({ config, credentials, db, log, runId: p.runId, signal });
        const itemCtx: ItemContext = { ...ctx, stage: self.name, key: p.item.key, log: log.child({ stage: self.name, item: p.item.key }) };
        const item: WorkItem<I> = { key: p.item.key, input: p.item.input as I, repo: p.item.repo, at: p.item.at };
        const outcome = await self.run(itemCtx, item);
        return encodeNumbers({ outcome, writes: sliceWrites(db, p.seed, spec.writes), counters: ctx.metrics.counters() });
      } finally {
        db.close();
      }
    },
  };
}

/** The worker handlers of the stages that run their items on the node (`perfmine worker` looks them up by kind). */
export function stageWorkerHandlers(stages: readonly AnyStage[]): Record<string, WorkerHandler> {
  const handlers: Record<string, WorkerHandler> = {};
  for (const stage of stages) {
    const remote = stage.remote;
    if (remote?.work) handlers[remote.kind] = (input, env) => remote.work!(stage, input.payload, env.signal);
  }
  return handlers;
}

const NUMBER_TAG = '$number';

/** JSON has no NaN or infinities (a speedup over a zero time is one): they travel tagged. */
export function encodeNumbers(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? { [NUMBER_TAG]: String(v) } : v)),
  );
}

export function decodeNumbers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeNumbers);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0]![0] === NUMBER_TAG && typeof entries[0]![1] === 'string') return Number(entries[0]![1]);
  return Object.fromEntries(entries.map(([k, v]) => [k, decodeNumbers(v)]));
}
