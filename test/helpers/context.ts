import { configSchema, type Config, type ConfigInput } from '../../pipeline/config/schema.js';
import { createContext } from '../../pipeline/context.js';
import type { Credentials } from '../../pipeline/credentials.js';
import { createLogger, type Logger } from '../../pipeline/logging.js';
import { Metrics } from '../../pipeline/metrics.js';
import type { ServiceOverrides } from '../../pipeline/services/index.js';
import type { PipelineContext } from '../../pipeline/stage.js';
import type { Scope } from '../../pipeline/scope.js';
import { monthWindow } from '../../pipeline/window.js';
import type { Db } from '../../cache/store.js';

export function testConfig(input: ConfigInput = {}): Config {
  return configSchema.parse(input);
}

export interface LogLine {
  readonly [key: string]: unknown;
}

/** A logger that keeps its JSON lines in memory (to look for secrets, or for what was said). */
export function memoryLogger(secrets: readonly string[] = []): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', format: 'json', secrets, destination: { write: (line) => void lines.push(line) } });
  return { log, lines };
}

export function credentials(overrides: Partial<Credentials> = {}): Credentials {
  return { githubTokens: [], openaiApiKey: undefined, googleApplicationCredentials: undefined, bigqueryProject: undefined, ...overrides };
}

export function testContext(
  db: Db,
  options: {
    config?: Config;
    credentials?: Credentials;
    log?: Logger;
    services?: ServiceOverrides;
    metrics?: Metrics;
    runId?: number | null;
  } = {},
): PipelineContext {
  return createContext({
    config: options.config ?? testConfig(),
    credentials: options.credentials ?? credentials(),
    db,
    log: options.log ?? memoryLogger().log,
    ...(options.services ? { services: options.services } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.runId === undefined ? {} : { runId: options.runId }),
  });
}

export function monthScope(month = '2025-04', overrides: Partial<Scope> = {}): Scope {
  return { window: monthWindow(month), repos: [], prs: [], source: { kind: 'github' }, ...overrides };
}
