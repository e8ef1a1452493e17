import type { Config } from '../config/schema.js';
import type { Credentials } from '../credentials.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import type { Queues } from '../queues.js';
import { ConfigError } from '../errors.js';
import { DockerService } from './docker.js';
import type { LlmService } from './llm-port.js';

/** What adapters are built from. */
export interface ServiceDeps {
  readonly config: Config;
  readonly credentials: Credentials;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly queues: Queues;
  readonly runId: number | null;
}

/** One adapter per outside system, created on first use (so a missing credential only matters where it is needed). */
export interface Services {
  readonly docker: DockerService;
  /** The LLM port; throws a ConfigError when this version has no adapter and none was given. */
  readonly llm: LlmService;
}

export interface ServiceOverrides {
  readonly docker?: DockerService;
  readonly llm?: LlmService;
}

export function createServices(deps: ServiceDeps, overrides: ServiceOverrides = {}): Services {
  let docker = overrides.docker;
  return {
    get docker() {
      return (docker ??= new DockerService({ runLabel: String(deps.runId ?? 1), metrics: deps.metrics }));
    },
    get llm() {
      if (overrides.llm) return overrides.llm;
      // The OpenAI-compatible adapter (pipeline/services/llm.ts) replaces this when it lands.
      throw new ConfigError('llm: this version of perfmine has no LLM adapter', {
        reason: 'llm-unavailable',
        fix: 'run with --llm none (rules and cached or neighbouring build scripts only)',
      });
    },
  };
}
