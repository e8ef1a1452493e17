import { availableParallelism } from 'node:os';
import { Ledger } from '../cache/ledger.js';
import type { Db } from '../cache/store.js';
import type { Config } from './config/schema.js';
import type { Credentials } from './credentials.js';
import type { Logger } from './logging.js';
import { Metrics } from './metrics.js';
import { createQueues } from './queues.js';
import { createServices, type ServiceOverrides } from './services/index.js';
import type { PipelineContext } from './stage.js';

export interface ContextOptions {
  readonly config: Config;
  readonly credentials: Credentials;
  readonly db: Db;
  readonly log: Logger;
  readonly runId?: number | null;
  readonly signal?: AbortSignal;
  readonly metrics?: Metrics;
  /** Adapters to use instead of the real ones (tests point them at loopback servers). */
  readonly services?: ServiceOverrides;
}

/** Wires the services a stage needs. Adapters are created on first use. */
export function createContext(options: ContextOptions): PipelineContext {
  const metrics = options.metrics ?? new Metrics();
  const queues = createQueues(options.config, availableParallelism());
  const runId = options.runId ?? null;
  const services = createServices(
    { config: options.config, credentials: options.credentials, log: options.log, metrics, queues, runId, db: options.db },
    options.services,
  );
  return {
    config: options.config,
    db: options.db,
    ledger: new Ledger(options.db),
    log: options.log,
    credentials: options.credentials,
    queues,
    services,
    metrics,
    runId,
    signal: options.signal ?? new AbortController().signal,
  };
}
