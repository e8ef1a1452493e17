import type { Db } from '../cache/store.js';
import type { Ledger } from '../cache/ledger.js';
import type { Config } from './config/schema.js';
import type { Credentials } from './credentials.js';
import type { Logger } from './logging.js';
import type { Metrics } from './metrics.js';
import type { QueueName, Queues } from './queues.js';
import type { Scope } from './scope.js';
import type { Services } from './services/index.js';

/** Every stage of the design, in pipeline order. The registry says which ones this version has. */
export const STAGE_NAMES = ['discover', 'collect', 'filter', 'classify', 'synthesize', 'validate', 'emit'] as const;
export type StageName = (typeof STAGE_NAMES)[number];

export function isStageName(name: string): name is StageName {
  return (STAGE_NAMES as readonly string[]).includes(name);
}

/** What every stage gets: configuration, the store, the adapters, a logger, the queues. */
export interface PipelineContext {
  readonly config: Config;
  readonly db: Db;
  readonly ledger: Ledger;
  readonly log: Logger;
  readonly credentials: Credentials;
  readonly queues: Queues;
  readonly services: Services;
  readonly metrics: Metrics;
  /** The run this work belongs to (null outside a recorded run, e.g. in unit tests). */
  readonly runId: number | null;
  /** Aborted on a hard stop (second SIGINT): in-flight work should give up. */
  readonly signal: AbortSignal;
}

/** The context of one item: its logger carries the stage and the item key. */
export interface ItemContext extends PipelineContext {
  readonly stage: StageName;
  readonly key: string;
}

/** One unit of work. `input` is everything the item's result depends on: its hash decides reuse. */
export interface WorkItem<I> {
  /** `owner/name`, `owner/name#N` or `owner/name@sha`. */
  readonly key: string;
  readonly input: I;
  /** `owner/name`, for `--repo` filters. */
  readonly repo?: string | null;
  /** The instant the item belongs to (a pull request's merged_at), for windows. */
  readonly at?: string | null;
}

/**
 * An item's result. `rows` is what `persist` writes into the stage's own tables (never kept in
 * the ledger): `run` makes it, the runner hands the outcome to `persist` as it is.
 */
export type Outcome<O, R = unknown> =
  | { readonly status: 'done'; readonly output: O; readonly detail?: string; readonly rows?: R }
  | { readonly status: 'dropped'; readonly reason: string; readonly detail?: string; readonly output?: O; readonly rows?: R };

/** One item's result from `runBatch`: its outcome, or what it failed with. */
export type BatchResult<I, O, R = unknown> =
  { readonly item: WorkItem<I>; readonly outcome: Outcome<O, R> } | { readonly item: WorkItem<I>; readonly error: unknown };

/**
 * A stage: plans its items from the scope (usually the done items of the stage before it),
 * processes each one independently, and records each result in the ledger together with its
 * own rows in one transaction.
 */
export interface Stage<I = unknown, O = unknown, R = unknown> {
  readonly name: StageName;
  /** Bump when the stage's logic changes: items done by an older version run again. */
  readonly version: number;
  readonly description: string;
  /** The outside system that bounds how many items of this stage run at once. */
  readonly system: QueueName;
  /** Checks credentials and configuration before any item starts; throws a ConfigError. */
  preflight?(ctx: PipelineContext, scope: Scope): void | Promise<void>;
  /** The items in scope. May call outside systems (listing pull requests). */
  plan(ctx: PipelineContext, scope: Scope): Promise<readonly WorkItem<I>[]>;
  /** Processes one item. Throw a PerfmineError for a failure; return `dropped` for a decision. */
  run(ctx: ItemContext, item: WorkItem<I>): Promise<Outcome<O, R>>;
  /**
   * Decides many items at once, for a stage of rules that calls no outside system: what the
   * items need is read in one ordered pass over the store rather than a lookup per item. When a
   * stage has it, the runner calls it instead of `run`, with the items in chunks, and commits each
   * chunk's results in one transaction. Every item of the chunk gets a result (an item without one
   * fails as a bug); a throw fails the whole chunk.
   */
  runBatch?(ctx: PipelineContext, items: readonly WorkItem<I>[]): Promise<readonly BatchResult<I, O, R>[]>;
  /** Whether the runner uses `runBatch` for this scope (default: whenever the stage has it). */
  batched?(scope: Scope): boolean;
  /**
   * How an item runs as a Slurm job (`executor: slurm`); a stage without it runs locally under
   * either executor. See pipeline/executor/.
   */
  remote?: RemoteStage<I, O, R>;
  /** Writes the item's rows (`outcome.rows`) into the stage's own tables; runs in the ledger's transaction. */
  persist?(db: Db, item: WorkItem<I>, outcome: Outcome<O, R>): void;
  /** Runs once after the items (e.g. emit writes the month's files). */
  finish?(ctx: PipelineContext, scope: Scope): Promise<void>;
}

/** A stage's items as jobs on other machines: what the worker gets, and its result back as an outcome. */
export interface RemoteStage<I, O, R = unknown> {
  /** The worker handler that runs the items on a node (pipeline/executor/worker.ts). */
  readonly kind: string;
  /** Everything the worker needs (JSON): the store is read here, on the coordinator. */
  payload(ctx: ItemContext, item: WorkItem<I>): unknown;
  /**
   * The worker's result as the item's outcome (validate it with zod). Runs in the ingest
   * transaction, before persist: it may write what the node wrote (ctx.db) besides the outcome.
   */
  ingest(ctx: ItemContext, result: unknown, item: WorkItem<I>): Outcome<O, R>;
  /** On the node: runs the item from its payload and returns the result (pipeline/executor/stage-remote.ts); `signal` aborts when Slurm ends the job. */
  work?(stage: Stage<I, O, R>, payload: unknown, signal: AbortSignal): Promise<unknown>;
}

/** Erases a stage's item types so that stages of different types fit in one registry. */
export type AnyStage = Stage<any, any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Declares a stage with its types checked. */
export function defineStage<I, O, R = unknown>(stage: Stage<I, O, R>): Stage<I, O, R> {
  return stage;
}
