import PQueue from 'p-queue';
import type { Config } from './config/schema.js';

/** One queue per outside system, so that each is loaded only as much as it can take. */
export type QueueName = 'github' | 'llm' | 'docker' | 'bigquery' | 'git' | 'local';

export type Queues = Readonly<Record<QueueName, PQueue>>;

export function queueSizes(config: Config, cores: number): Record<QueueName, number> {
  return {
    github: config.github.concurrency,
    llm: config.llm.concurrency,
    docker: config.docker.concurrency,
    bigquery: 2,
    git: Math.max(1, cores),
    local: Math.max(1, cores),
  };
}

export function createQueues(config: Config, cores: number): Queues {
  const sizes = queueSizes(config, cores);
  const make = (name: QueueName) => new PQueue({ concurrency: sizes[name] });
  return {
    github: make('github'),
    llm: make('llm'),
    docker: make('docker'),
    bigquery: make('bigquery'),
    git: make('git'),
    local: make('local'),
  };
}
