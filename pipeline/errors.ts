/**
 * The closed set of error kinds. Every failure the pipeline handles is one of these, and the
 * runner and the CLI map them to outcomes in one place (`outcomeOf`, `exitCodeOf`).
 *
 * - outside-service: an outside system (GitHub, the LLM server, Docker, BigQuery, git) failed or
 *   refused; adapters retry and back off before raising it. The item is recorded as failed.
 * - item: this one item cannot be processed (a patch that does not apply, a malformed file).
 *   The item is recorded as failed and the run goes on.
 * - config: the operator must change something (a flag, the config file, a missing credential).
 *   The command stops and exits 2 with the fix.
 * - internal: a bug in perfmine. The item is recorded as failed with the stack, and the run goes on.
 */
export type ErrorKind = 'outside-service' | 'item' | 'config' | 'internal';

export const EXIT = {
  ok: 0,
  /** some items failed; everything else was recorded */
  itemsFailed: 1,
  /** usage, configuration, credentials, or another run holds the database */
  config: 2,
  /** a bug: an error that is none of the known kinds escaped */
  internal: 3,
  /** stopped by SIGINT / SIGTERM */
  interrupted: 130,
} as const;

export abstract class PerfmineError extends Error {
  abstract readonly kind: ErrorKind;
  /** A short stable code such as `github-rate-limited` or `patch-does-not-apply`. */
  readonly reason: string;
  /** What the operator can do about it, when there is something to do. */
  readonly fix: string | undefined;

  constructor(reason: string, message: string, options: { fix?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.reason = reason;
    this.fix = options.fix;
    this.name = new.target.name;
  }
}

export type ServiceName = 'github' | 'llm' | 'docker' | 'bigquery' | 'git' | 'slurm' | 'package-index' | 'registry';

export class OutsideServiceError extends PerfmineError {
  readonly kind = 'outside-service' as const;
  readonly service: ServiceName;
  /** HTTP status or process exit code, when there is one. */
  readonly status: number | undefined;
  readonly retryable: boolean;

  constructor(
    service: ServiceName,
    reason: string,
    message: string,
    options: { status?: number; retryable?: boolean; fix?: string; cause?: unknown } = {},
  ) {
    super(reason, message, options);
    this.service = service;
    this.status = options.status;
    this.retryable = options.retryable ?? false;
  }
}

export class ItemError extends PerfmineError {
  readonly kind = 'item' as const;
}

export class ConfigError extends PerfmineError {
  readonly kind = 'config' as const;
  /** One `path: message` line per problem. */
  readonly issues: readonly string[];

  constructor(issues: readonly string[] | string, options: { reason?: string; fix?: string; cause?: unknown } = {}) {
    const list = typeof issues === 'string' ? [issues] : issues;
    super(options.reason ?? 'config', list.join('\n'), options);
    this.issues = list;
  }
}

export class InternalError extends PerfmineError {
  readonly kind = 'internal' as const;
}

/** The kind of any thrown value; anything that is not a PerfmineError is a bug. */
export function kindOf(error: unknown): ErrorKind {
  if (error instanceof PerfmineError) return error.kind;
  if (isAbortError(error)) return 'outside-service';
  return 'internal';
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

export interface ErrorSummary {
  readonly kind: ErrorKind;
  readonly reason: string;
  readonly message: string;
}

/** A one-line, secret-free summary of an error for the ledger and the logs. */
export function summarize(error: unknown): ErrorSummary {
  if (error instanceof PerfmineError) {
    return { kind: error.kind, reason: error.reason, message: error.message };
  }
  if (isAbortError(error)) {
    return { kind: 'outside-service', reason: 'timeout', message: (error as Error).message || 'timed out' };
  }
  if (error instanceof Error) {
    const where = error.stack?.split('\n')[1]?.trim();
    return { kind: 'internal', reason: 'bug', message: `${error.name}: ${error.message}${where ? ` (${where})` : ''}` };
  }
  return { kind: 'internal', reason: 'bug', message: String(error) };
}

export function exitCodeOf(error: unknown): number {
  switch (kindOf(error)) {
    case 'config':
      return EXIT.config;
    case 'internal':
      return EXIT.internal;
    default:
      return EXIT.itemsFailed;
  }
}
