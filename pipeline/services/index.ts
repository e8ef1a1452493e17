import type { Db } from '../../cache/store.js';
import type { Config } from '../config/schema.js';
import type { Credentials } from '../credentials.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import type { Queues } from '../queues.js';
import { BigQueryService } from './bigquery.js';
import { DockerService } from './docker.js';
import { resolveLlmApiKey } from './llm-key.js';
import type { AgentRequest, LlmResult, LlmService, StructuredRequest } from './llm-port.js';
import { GitService } from './git.js';
import { GitHubService } from './github.js';

/** What adapters are built from. */
export interface ServiceDeps {
  readonly config: Config;
  readonly credentials: Credentials;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly queues: Queues;
  readonly runId: number | null;
  /** The store: the LLM adapter caches answers in it, the GitHub adapter its ETags. */
  readonly db: Db;
}

/** One adapter per outside system, created on first use (so a missing credential only matters where it is needed). */
export interface Services {
  readonly docker: DockerService;
  /** Throws a ConfigError under `--llm none`, or when OPENAI_API_KEY is missing for a remote server. */
  readonly llm: LlmService;
  readonly github: GitHubService;
  readonly git: GitService;
  readonly bigquery: BigQueryService;
}

export interface ServiceOverrides {
  readonly docker?: DockerService;
  readonly llm?: LlmService;
  readonly github?: GitHubService;
  readonly git?: GitService;
  readonly bigquery?: BigQueryService;
}

/** The GitHub adapter as the configuration says (tests call it with a loopback baseUrl). */
export function createGitHubService(deps: ServiceDeps): GitHubService {
  const gh = deps.config.github;
  return new GitHubService({
    baseUrl: gh.baseUrl,
    tokens: deps.credentials.githubTokens,
    queue: deps.queues.github,
    timeoutMs: gh.timeoutMs,
    metrics: deps.metrics,
    log: deps.log.child({ service: 'github' }),
    db: deps.db ?? null,
    retries: gh.retries,
    retryUnitMs: gh.retryUnitMs,
    maxRateLimitWaitSeconds: gh.maxRateLimitWaitSeconds,
    secondaryRateLimitRetries: gh.secondaryRateLimitRetries,
    searchIntervalMs: deps.config.discover.codeSearch.intervalMs,
    maxCachedBodyBytes: gh.maxCachedBodyBytes,
  });
}

export function createServices(deps: ServiceDeps, overrides: ServiceOverrides = {}): Services {
  let docker = overrides.docker;
  let llm = overrides.llm;
  let github = overrides.github;
  let git = overrides.git;
  let bigquery = overrides.bigquery;
  return {
    get docker() {
      return (docker ??= new DockerService({ runLabel: String(deps.runId ?? 1), metrics: deps.metrics }));
    },
    get llm() {
      if (llm) return llm;
      const key = resolveLlmApiKey(deps.config.llm, deps.credentials);
      if (key.placeholder)
        deps.log.info({ baseUrl: deps.config.llm.baseUrl }, 'no OPENAI_API_KEY: using a placeholder key for the local LLM server');
      llm = lazyLlm(async () => {
        const { OpenAiLlmService } = await import('./llm.js');
        return new OpenAiLlmService({
          config: deps.config.llm,
          apiKey: key.apiKey,
          db: deps.db,
          log: deps.log.child({ service: 'llm' }),
          metrics: deps.metrics,
          queue: deps.queues.llm,
          runId: deps.runId,
        });
      });
      return llm;
    },
    get github() {
      return (github ??= createGitHubService(deps));
    },
    get git() {
      return (git ??= new GitService({
        queue: deps.queues.git,
        timeoutMs: deps.config.collect.gitTimeoutMs,
        log: deps.log.child({ service: 'git' }),
      }));
    },
    get bigquery() {
      return (bigquery ??= new BigQueryService({
        projectId: deps.credentials.bigqueryProject,
        location: deps.config.discover.bigquery.location,
        queue: deps.queues.bigquery,
        timeoutMs: deps.config.discover.bigquery.timeoutMs,
        log: deps.log.child({ service: 'bigquery' }),
      }));
    },
  };
}

/**
 * The LLM adapter, its module (and the openai client under it) imported on the first request:
 * commands and stages that never ask a model start without them. Credentials are checked before,
 * when the adapter is asked for, so a missing key still fails where the LLM is needed.
 */
function lazyLlm(load: () => Promise<LlmService>): LlmService {
  let service: Promise<LlmService> | null = null;
  const adapter = () => (service ??= load());
  return {
    structured: async <T>(request: StructuredRequest<T>): Promise<LlmResult<T>> => (await adapter()).structured(request),
    agent: async <T>(request: AgentRequest<T>): Promise<LlmResult<T>> => (await adapter()).agent(request),
  };
}
