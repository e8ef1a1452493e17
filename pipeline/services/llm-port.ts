import type { z } from 'zod';

/**
 * The LLM port. The adapter (pipeline/services/llm.ts) speaks OpenAI-compatible chat completions
 * with JSON-schema structured output, validates every answer with zod, repairs once, falls back
 * from the primary to the fallback model, accounts tokens and cost, and caches every answer in
 * SQLite by hash of (prompt file content, inputs, model) so that nothing is paid for twice.
 * Stages depend on this interface only.
 */

/** Token and cost accounting of one logical call (possibly several HTTP requests). */
export interface LlmUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly costUsd: number;
  /** HTTP requests actually sent (0 when every answer came from the cache). */
  readonly requests: number;
  /** Answers served from the cache. */
  readonly cacheHits: number;
}

export interface LlmResult<T> {
  readonly value: T;
  /** The model that produced the accepted answer. */
  readonly model: string;
  readonly usage: LlmUsage;
}

/** A budget shared by the calls of one item (a candidate's synthesis); exceeding it throws. */
export interface TokenBudget {
  readonly limit: number;
  used: number;
}

export interface StructuredRequest<T> {
  /** Prompt file name under prompts/ (without .md). */
  readonly prompt: string;
  /** Values for the prompt's declared inputs. */
  readonly inputs: Readonly<Record<string, string>>;
  /** The answer's shape; also sent to the server as the JSON schema of the response format. */
  readonly schema: z.ZodType<T>;
  readonly schemaName: string;
  /** Which models to try: default primary then fallback. */
  readonly models?: 'cascade' | 'primary' | 'fallback';
  readonly budget?: TokenBudget;
  readonly signal?: AbortSignal;
  /**
   * The item that asks (`owner/name#N`, `owner/name@sha`), recorded with every request in the
   * `llm_calls` table. Not part of the cache key. (Added by issue 5; optional.)
   */
  readonly item?: string;
}

/** A tool the model may call during an agent conversation. */
export interface AgentTool {
  readonly name: string;
  readonly description: string;
  /** JSON schema of the arguments object. */
  readonly parameters: Readonly<Record<string, unknown>>;
  /**
   * Runs the tool; the returned text is what the model sees (truncate it yourself). `args` is the
   * parsed JSON of the model's arguments (validate it). A PerfmineError thrown here ends the
   * conversation with that error; any other error is shown to the model as `error: ...`.
   */
  run(args: unknown, signal?: AbortSignal): Promise<string>;
}

export interface AgentRequest<T> extends StructuredRequest<T> {
  readonly tools: readonly AgentTool[];
  /** Tool-calling turns before the model must answer (default 10). */
  readonly maxTurns?: number;
}

export interface LlmService {
  /** One structured answer. */
  structured<T>(request: StructuredRequest<T>): Promise<LlmResult<T>>;
  /**
   * A tool-using conversation that ends with a structured answer. Every completion request is
   * cached by hash of the whole conversation and model, so replaying it costs nothing.
   */
  agent<T>(request: AgentRequest<T>): Promise<LlmResult<T>>;
}
