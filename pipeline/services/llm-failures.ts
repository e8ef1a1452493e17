import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

/**
 * What went wrong with one request to an OpenAI-compatible server, and what to do about it.
 * Pure: an error (or an answer) in, a description out.
 */
export type LlmOutcome =
  | 'ok'
  | 'malformed'
  | 'refused'
  | 'empty'
  | 'rate-limited'
  | 'quota-exhausted'
  | 'timeout'
  | 'connection'
  | 'server-error'
  | 'model-not-found'
  | 'endpoint-not-found'
  | 'context-too-long'
  | 'bad-request'
  | 'unauthorized'
  | 'aborted';

/** The reason code an item fails with when every model of the cascade gave this outcome. */
export const LLM_REASONS: Readonly<Record<Exclude<LlmOutcome, 'ok'>, string>> = {
  malformed: 'llm-malformed-output',
  refused: 'llm-refused',
  empty: 'llm-empty-answer',
  'rate-limited': 'llm-rate-limited',
  'quota-exhausted': 'llm-quota-exhausted',
  timeout: 'llm-timeout',
  connection: 'llm-unreachable',
  'server-error': 'llm-server-error',
  'model-not-found': 'llm-model-not-found',
  'endpoint-not-found': 'llm-endpoint-not-found',
  'context-too-long': 'llm-context-too-long',
  'bad-request': 'llm-bad-request',
  unauthorized: 'llm-unauthorized',
  aborted: 'llm-aborted',
};

export interface FailureInfo {
  readonly outcome: Exclude<LlmOutcome, 'ok'>;
  /** HTTP status, when the server answered. */
  readonly status: number | null;
  /** Worth asking the same model again (after a wait). */
  readonly retryable: boolean;
  /** What the server asked us to wait (`retry-after-ms` / `retry-after`), in milliseconds. */
  readonly retryAfterMs: number | null;
  /** One line, without any credential (server messages never echo the key back). */
  readonly message: string;
}

interface HeaderBag {
  get(name: string): string | null;
}

/** `retry-after-ms`, else `retry-after` as seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(headers: HeaderBag | null | undefined, now: number = Date.now()): number | null {
  if (!headers) return null;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.round(Number(ms));
  const value = headers.get('retry-after');
  if (value === null) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

/** Describes an error thrown by the openai client (or by fetch underneath it). */
export function describeFailure(error: unknown, now: number = Date.now()): FailureInfo {
  const base = { retryAfterMs: null, status: null } as const;
  if (error instanceof APIUserAbortError) return { ...base, outcome: 'aborted', retryable: false, message: 'the request was aborted' };
  if (error instanceof APIConnectionTimeoutError) return { ...base, outcome: 'timeout', retryable: true, message: 'the request timed out' };
  if (error instanceof APIConnectionError) {
    return { ...base, outcome: 'connection', retryable: true, message: `cannot reach the server: ${causeMessage(error)}` };
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const status = error.status;
    const code = typeof error.code === 'string' ? error.code : '';
    const message = `HTTP ${status}: ${oneLine(error.message)}`;
    const headers = error.headers as HeaderBag | undefined;
    if (status === 429) {
      if (code === 'insufficient_quota') return { ...base, status, outcome: 'quota-exhausted', retryable: false, message };
      return { status, outcome: 'rate-limited', retryable: true, retryAfterMs: parseRetryAfter(headers, now), message };
    }
    if (status === 401 || status === 403) return { ...base, status, outcome: 'unauthorized', retryable: false, message };
    if (status === 404) {
      const model = code === 'model_not_found' || /model/i.test(error.message);
      return { ...base, status, outcome: model ? 'model-not-found' : 'endpoint-not-found', retryable: false, message };
    }
    if (status === 400 || status === 413 || status === 422) {
      const tooLong = code === 'context_length_exceeded' || /context length|maximum context|too many tokens/i.test(error.message);
      return { ...base, status, outcome: tooLong ? 'context-too-long' : 'bad-request', retryable: false, message };
    }
    if (status === 408 || status === 409 || status >= 500) {
      return { status, outcome: 'server-error', retryable: true, retryAfterMs: parseRetryAfter(headers, now), message };
    }
    return { ...base, status, outcome: 'server-error', retryable: false, message };
  }
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) {
    return { ...base, outcome: 'timeout', retryable: true, message: oneLine(error.message) || 'timed out' };
  }
  return { ...base, outcome: 'connection', retryable: true, message: oneLine(String((error as Error)?.message ?? error)) };
}

function causeMessage(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  const text = cause instanceof Error ? cause.message : error.message;
  return oneLine(text);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}

/** Exponential backoff when the server gives no `retry-after`: base, 2·base, 4·base ... */
export function backoffMs(attempt: number, baseMs: number): number {
  return baseMs * 2 ** attempt;
}
