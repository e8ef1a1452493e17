import type { Config } from '../config/schema.js';
import type { Credentials } from '../credentials.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import type { Queues } from '../queues.js';
import { DockerService } from './docker.js';

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
}

export interface ServiceOverrides {
  readonly docker?: DockerService;
}

export function createServices(deps: ServiceDeps, overrides: ServiceOverrides = {}): Services {
  let docker = overrides.docker;
  return {
    get docker() {
      return (docker ??= new DockerService({ runLabel: String(deps.runId ?? 1) }));
    },
  };
}
