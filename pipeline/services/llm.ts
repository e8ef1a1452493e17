import { setTimeout as delay } from 'node:timers/promises';
import OpenAI from 'openai';
import type PQueue from 'p-queue';
import { LlmCache, type LlmCacheEntry, type LlmCallRecord } from '../../cache/llm-cache.js';
import type { Db } from '../../cache/store.js';
import type { LlmConfig } from '../config/schema.js';
import { ConfigError, ItemError, OutsideServiceError, PerfmineError } from '../errors.js';
import { hashOf } from '../hash.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import { loadPrompt, PROMPTS_DIR, renderPrompt, type Prompt } from '../prompts.js';
import { backoffMs, describeFailure, LLM_REASONS, type FailureInfo, type LlmOutcome } from './llm-failures.js';
import type { AgentRequest, AgentTool, LlmResult, LlmService, StructuredRequest, TokenBudget } from './llm-port.js';
import { parseAnswer, responseFormatFor, type JsonSchemaFormat } from './llm-schema.js';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type AnswerMessage = OpenAI.Chat.Completions.ChatCompletionMessage;
type ToolCall = OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
type FunctionTool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;
type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface LlmServiceOptions {
  /** The `llm` section of the configuration (models, timeouts, retries, prices). */
  readonly config: LlmConfig;
  /** From resolveLlmApiKey: OPENAI_API_KEY, or a placeholder for a local server. Never logged. */
  readonly apiKey: string;
  /** The store: answers are cached in `llm_cache`, requests accounted in `llm_calls`. */
  readonly db: Db;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** Bounds the requests in flight (`ctx.queues.llm`). */
  readonly queue: PQueue;
  readonly runId?: number | null;
  /** Server root; default `config.baseUrl`, else the OpenAI API. Include the `/v1`. */
  readonly baseUrl?: string;
  /** A fetch for the openai client (default: the global one). */
  readonly fetch?: Fetch;
  /** A ready client; when given, apiKey/baseUrl/fetch are not used. */
  readonly client?: OpenAI;
  readonly promptsDir?: string;
  /** Waits between retries (default: an abortable timer). */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

interface MutableUsage {
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  requests: number;
  cacheHits: number;
}

/** A model that could not give an acceptable answer (the cascade moves on to the next one). */
class ModelFailure extends Error {
  constructor(
    readonly model: string,
    readonly info: FailureInfo,
  ) {
    super(`${model}: ${info.outcome} (${info.message})`);
  }
}

type Verdict<V> = { ok: true; value: V; data: unknown } | { ok: false; error: string };

interface RequestMeta {
  readonly prompt: string;
  readonly item: string | null;
  readonly purpose: LlmCallRecord['purpose'];
  readonly cacheKey: string | null;
  readonly signal: AbortSignal | undefined;
  readonly budget: TokenBudget | undefined;
  readonly usage: MutableUsage;
}

interface Reply<V> {
  readonly message: AnswerMessage;
  readonly verdict: Verdict<V>;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly costUsd: number;
}

const abortableSleep = (ms: number, signal?: AbortSignal) => delay(ms, undefined, signal ? { signal } : {});

/**
 * The LLM adapter: OpenAI-compatible chat completions through the `openai` client.
 *
 * - Answers are JSON-schema structured output, validated with zod; a malformed answer is sent
 *   back once with the validation error (repair); then the next model of the cascade is tried.
 * - A timeout, 429, 5xx, connection error or empty answer is retried on the same model up to
 *   `llm.maxRetries` times, waiting what `retry-after` says (at most `llm.maxRetryAfterSeconds`;
 *   a longer wait gives up on that model) or an exponential backoff. A refusal, an unknown model,
 *   a bad request move on to the next model. When no model is left, an OutsideServiceError with
 *   a named reason (`llm-refused`, `llm-timeout`, ...; see LLM_REASONS) is raised. A 401/403
 *   is a ConfigError (every item would fail alike).
 * - Every accepted answer is cached in SQLite by hash of (prompt file content, inputs, model,
 *   schema); every agent completion by hash of (the whole conversation, tools, model). Before
 *   anything is sent, every model of the cascade is looked up, so nothing is paid for twice.
 * - Every HTTP request is recorded in `llm_calls` with its tokens and cost (config price table)
 *   and counted in the metrics `llm.requests`, `llm.cacheHits`, `llm.promptTokens`,
 *   `llm.completionTokens`, `llm.costUsd`.
 */
export class OpenAiLlmService implements LlmService {
  readonly #config: LlmConfig;
  readonly #client: OpenAI;
  readonly #cache: LlmCache;
  readonly #log: Logger;
  readonly #metrics: Metrics;
  readonly #queue: PQueue;
  readonly #runId: number | null;
  readonly #promptsDir: string;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(options: LlmServiceOptions) {
    this.#config = options.config;
    this.#client =
      options.client ??
      new OpenAI({
        apiKey: options.apiKey,
        // Explicit, so that the client never reads OPENAI_BASE_URL itself (config already did).
        baseURL: options.baseUrl ?? options.config.baseUrl ?? 'https://api.openai.com/v1',
        maxRetries: 0,
        timeout: options.config.timeoutMs,
        ...(options.fetch ? { fetch: options.fetch } : {}),
      });
    this.#cache = new LlmCache(options.db);
    this.#log = options.log;
    this.#metrics = options.metrics;
    this.#queue = options.queue;
    this.#runId = options.runId ?? null;
    this.#promptsDir = options.promptsDir ?? PROMPTS_DIR;
    this.#sleep = options.sleep ?? abortableSleep;
  }

  /** The models to try, in order. */
  models(which: StructuredRequest<unknown>['models'] = 'cascade'): string[] {
    const { model, fallbackModel } = this.#config;
    if (which === 'primary') return [model];
    if (which === 'fallback') return [fallbackModel ?? model];
    return fallbackModel && fallbackModel !== model ? [model, fallbackModel] : [model];
  }

  /** The server's model ids (for `perfmine doctor`). */
  async listModels(signal?: AbortSignal): Promise<string[]> {
    try {
      const page = await this.#client.models.list(
        signal ? { signal, timeout: this.#config.timeoutMs } : { timeout: this.#config.timeoutMs },
      );
      return page.data.map((m) => m.id).sort();
    } catch (error) {
      const info = describeFailure(error);
      throw new OutsideServiceError('llm', LLM_REASONS[info.outcome], `listing models: ${info.message}`, {
        ...(info.status === null ? {} : { status: info.status }),
        retryable: info.retryable,
        cause: error,
      });
    }
  }

  async structured<T>(request: StructuredRequest<T>): Promise<LlmResult<T>> {
    const prompt = loadPrompt(request.prompt, this.#promptsDir);
    const rendered = renderPrompt(prompt, request.inputs);
    const format = responseFormatFor(request.schema, request.schemaName);
    const models = this.models(request.models);
    const usage = newUsage();
    const keyOf = (model: string) =>
      hashOf({ kind: 'structured', prompt: prompt.hash, inputs: request.inputs, model, schema: format.json_schema });

    for (const model of models) {
      const hit = this.#cache.get(keyOf(model));
      if (!hit) continue;
      const parsed = request.schema.safeParse(hit.response);
      if (!parsed.success) continue; // the schema changed since: ask again
      this.#countHit(usage, hit, request.budget);
      return { value: parsed.data, model, usage: { ...usage } };
    }

    const failures: ModelFailure[] = [];
    for (const model of models) {
      const before = { ...usage };
      const key = keyOf(model);
      try {
        const answer = await this.#structuredOn(model, prompt, rendered, format, request, usage, key);
        this.#cache.put({
          key,
          kind: 'structured',
          prompt: prompt.name,
          model,
          response: answer.data,
          promptTokens: usage.promptTokens - before.promptTokens,
          completionTokens: usage.completionTokens - before.completionTokens,
          costUsd: usage.costUsd - before.costUsd,
        });
        return { value: answer.value, model, usage: { ...usage } };
      } catch (error) {
        if (!(error instanceof ModelFailure)) throw error;
        failures.push(error);
        this.#logFailure(prompt.name, request.item, error, models.indexOf(model) + 1 < models.length);
      }
    }
    throw exhausted(prompt.name, failures);
  }

  async agent<T>(request: AgentRequest<T>): Promise<LlmResult<T>> {
    const prompt = loadPrompt(request.prompt, this.#promptsDir);
    const rendered = renderPrompt(prompt, request.inputs);
    const format = responseFormatFor(request.schema, request.schemaName);
    const models = this.models(request.models);
    const usage = newUsage();
    const maxTurns = request.maxTurns ?? 10;
    const tools: FunctionTool[] = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: { ...t.parameters } },
    }));
    const byName = new Map(request.tools.map((t) => [t.name, t]));
    const messages: Message[] = [
      { role: 'system', content: rendered.system },
      { role: 'user', content: rendered.user },
    ];
    const failures: ModelFailure[] = [];
    let index = 0;
    let turn = 0;
    let repairsLeft = 1;
    let noticeSent = false;

    const nextModel = (failure: ModelFailure): boolean => {
      failures.push(failure);
      const more = index + 1 < models.length;
      this.#logFailure(prompt.name, request.item, failure, more);
      if (more) {
        index += 1;
        repairsLeft = 1;
      }
      return more;
    };

    for (;;) {
      const model = models[index]!;
      const final = turn >= maxTurns;
      if (final && !noticeSent) {
        messages.push({ role: 'user', content: finalNotice(maxTurns) });
        noticeSent = true;
      }
      const check = (message: AnswerMessage): Verdict<T | undefined> => {
        if (functionCalls(message).length > 0) {
          return final
            ? { ok: false, error: 'tool calls are closed now: answer with the final JSON object only' }
            : { ok: true, value: undefined, data: null };
        }
        return parseAnswer(request.schema, message.content ?? '');
      };
      let reply: Reply<T | undefined>;
      try {
        reply = await this.#agentTurn(
          model,
          prompt,
          { messages: [...messages], format, tools: final ? null : tools },
          request,
          usage,
          check,
          final,
        );
      } catch (error) {
        if (error instanceof ModelFailure && nextModel(error)) continue;
        if (error instanceof ModelFailure) throw exhausted(prompt.name, failures);
        throw error;
      }

      const calls = functionCalls(reply.message);
      if (reply.verdict.ok && calls.length > 0) {
        messages.push({ role: 'assistant', content: reply.message.content ?? null, tool_calls: calls });
        for (const call of calls) {
          messages.push({ role: 'tool', tool_call_id: call.id, content: await runTool(byName, call, request.signal) });
        }
        turn += 1;
        continue;
      }
      if (reply.verdict.ok) return { value: reply.verdict.value as T, model, usage: { ...usage } };

      if (repairsLeft > 0) {
        repairsLeft -= 1;
        messages.push(
          { role: 'assistant', content: reply.message.content ?? '' },
          { role: 'user', content: repairText(reply.verdict.error, format) },
        );
        continue;
      }
      const failure = new ModelFailure(model, {
        outcome: 'malformed',
        status: null,
        retryable: false,
        retryAfterMs: null,
        message: reply.verdict.error,
      });
      if (nextModel(failure)) continue;
      throw exhausted(prompt.name, failures);
    }
  }

  /** One model's structured answer: ask, and repair once with the validation error. */
  async #structuredOn<T>(
    model: string,
    prompt: Prompt,
    rendered: { system: string; user: string },
    format: JsonSchemaFormat,
    request: StructuredRequest<T>,
    usage: MutableUsage,
    cacheKey: string,
  ): Promise<{ value: T; data: unknown }> {
    const messages: Message[] = [
      { role: 'system', content: rendered.system },
      { role: 'user', content: rendered.user },
    ];
    const check = (message: AnswerMessage): Verdict<T> => parseAnswer(request.schema, message.content ?? '');
    const meta = (purpose: 'answer' | 'repair'): RequestMeta => ({
      prompt: prompt.name,
      item: request.item ?? null,
      purpose,
      cacheKey,
      signal: request.signal,
      budget: request.budget,
      usage,
    });
    const first = await this.#request(model, { messages: [...messages], response_format: format }, meta('answer'), check);
    if (first.verdict.ok) return first.verdict;
    this.#log.warn(
      { prompt: prompt.name, model, item: request.item, problem: first.verdict.error.slice(0, 300) },
      'malformed LLM answer; asking for a repair',
    );
    messages.push(
      { role: 'assistant', content: first.message.content ?? '' },
      { role: 'user', content: repairText(first.verdict.error, format) },
    );
    const second = await this.#request(model, { messages: [...messages], response_format: format }, meta('repair'), check);
    if (second.verdict.ok) return second.verdict;
    throw new ModelFailure(model, {
      outcome: 'malformed',
      status: null,
      retryable: false,
      retryAfterMs: null,
      message: second.verdict.error,
    });
  }

  /** One completion of an agent conversation, from the cache when this exact conversation was seen. */
  async #agentTurn<V>(
    model: string,
    prompt: Prompt,
    turn: { messages: Message[]; format: JsonSchemaFormat; tools: FunctionTool[] | null },
    request: AgentRequest<unknown>,
    usage: MutableUsage,
    check: (message: AnswerMessage) => Verdict<V>,
    final: boolean,
  ): Promise<Reply<V>> {
    const key = hashOf({
      kind: 'agent-turn',
      prompt: prompt.hash,
      model,
      messages: turn.messages,
      tools: turn.tools,
      schema: turn.format.json_schema,
    });
    const hit = this.#cache.get(key);
    if (hit) {
      const message = hit.response as AnswerMessage;
      this.#countHit(usage, hit, request.budget);
      return { message, verdict: check(message), promptTokens: 0, completionTokens: 0, costUsd: 0 };
    }
    const body = {
      messages: turn.messages,
      response_format: turn.format,
      ...(turn.tools && turn.tools.length > 0 ? { tools: turn.tools, tool_choice: 'auto' as const } : {}),
    };
    const meta: RequestMeta = {
      prompt: prompt.name,
      item: request.item ?? null,
      purpose: final ? 'agent-final' : 'agent-turn',
      cacheKey: key,
      signal: request.signal,
      budget: request.budget,
      usage,
    };
    const reply = await this.#request(model, body, meta, check);
    const stored: AnswerMessage = {
      role: 'assistant',
      content: reply.message.content ?? null,
      refusal: null,
      ...(reply.message.tool_calls?.length ? { tool_calls: reply.message.tool_calls } : {}),
    };
    this.#cache.put({
      key,
      kind: 'agent-turn',
      prompt: prompt.name,
      model,
      response: stored,
      promptTokens: reply.promptTokens,
      completionTokens: reply.completionTokens,
      costUsd: reply.costUsd,
    });
    return reply;
  }

  /**
   * One logical request to one model: sends it, retrying transient failures on the same model,
   * and records every HTTP request. Returns the first answer that is neither empty nor a refusal,
   * with the caller's verdict on it; throws a ModelFailure when this model is done for.
   */
  async #request<V>(
    model: string,
    body: { messages: Message[]; response_format: JsonSchemaFormat; tools?: FunctionTool[]; tool_choice?: 'auto' },
    meta: RequestMeta,
    check: (message: AnswerMessage) => Verdict<V>,
  ): Promise<Reply<V>> {
    const config = this.#config;
    for (let attempt = 0; ; attempt++) {
      checkBudget(meta.budget);
      const started = Date.now();
      let info: FailureInfo;
      // The openai client never removes the listener it adds to a caller's signal: give it a
      // child signal per request, unlinked afterwards, so that a run-long signal does not collect one per request.
      const link = linkedSignal(meta.signal);
      try {
        const completion = await this.#queue.add(
          () =>
            this.#client.chat.completions.create(
              {
                model,
                temperature: config.temperature,
                ...(config.maxOutputTokens === undefined ? {} : { max_tokens: config.maxOutputTokens }),
                ...body,
              },
              { timeout: config.timeoutMs, maxRetries: 0, ...(link.signal ? { signal: link.signal } : {}) },
            ),
          link.signal ? { signal: link.signal } : {},
        );
        const tokens = this.#account(model, completion.usage, meta);
        const choice = completion.choices?.[0];
        const message = choice?.message;
        if (!choice || !message) {
          info = failure('empty', true, 'the answer has no choices');
        } else if ((typeof message.refusal === 'string' && message.refusal.length > 0) || choice.finish_reason === 'content_filter') {
          info = failure('refused', false, message.refusal ? `refused: ${message.refusal.slice(0, 200)}` : 'stopped by the content filter');
        } else if (!message.content?.trim() && functionCalls(message).length === 0) {
          info = failure('empty', true, `empty answer (finish_reason ${choice.finish_reason})`);
        } else {
          const verdict = check(message);
          const truncated = !verdict.ok && choice.finish_reason === 'length';
          const checked: Verdict<V> = truncated
            ? { ok: false, error: `${verdict.ok ? '' : verdict.error} (the answer was cut off at the token limit)` }
            : verdict;
          this.#record(model, meta, checked.ok ? 'ok' : 'malformed', 200, tokens, started);
          return { message, verdict: checked, ...tokens };
        }
        this.#record(model, meta, info.outcome, 200, tokens, started);
      } catch (error) {
        if (error instanceof PerfmineError) throw error;
        info = meta.signal?.aborted ? failure('aborted', false, 'the request was aborted') : describeFailure(error);
        this.#record(model, meta, info.outcome, info.status, { promptTokens: 0, completionTokens: 0, costUsd: 0 }, started);
      } finally {
        link.dispose();
      }

      if (info.outcome === 'aborted') throw new OutsideServiceError('llm', 'llm-aborted', `${meta.prompt}: the LLM request was aborted`);
      if (info.outcome === 'unauthorized') {
        throw new ConfigError(`llm: the server refused the credentials (${info.message})`, {
          reason: 'llm-unauthorized',
          fix: 'check OPENAI_API_KEY and OPENAI_BASE_URL; --llm none runs the rules without any LLM',
        });
      }
      if (!info.retryable || attempt >= config.maxRetries) throw new ModelFailure(model, info);
      if (info.retryAfterMs !== null && info.retryAfterMs > config.maxRetryAfterSeconds * 1000) {
        throw new ModelFailure(model, {
          ...info,
          retryable: false,
          message: `${info.message}; retry-after ${Math.ceil(info.retryAfterMs / 1000)} s is longer than llm.maxRetryAfterSeconds (${config.maxRetryAfterSeconds})`,
        });
      }
      const waitMs = info.retryAfterMs ?? backoffMs(attempt, config.retryBaseMs);
      this.#log.warn(
        { prompt: meta.prompt, model, item: meta.item, outcome: info.outcome, status: info.status, attempt: attempt + 1, waitMs },
        'LLM request failed; retrying',
      );
      try {
        await this.#sleep(waitMs, meta.signal);
      } catch (error) {
        throw new OutsideServiceError('llm', 'llm-aborted', `${meta.prompt}: aborted while waiting to retry`, { cause: error });
      }
    }
  }

  #account(model: string, raw: OpenAI.Completions.CompletionUsage | undefined, meta: RequestMeta) {
    const promptTokens = raw?.prompt_tokens ?? 0;
    const completionTokens = raw?.completion_tokens ?? 0;
    const price = this.#config.prices[model];
    const costUsd = price ? (promptTokens * price.inputPerMTok + completionTokens * price.outputPerMTok) / 1e6 : 0;
    if (!price) this.#metrics.add('llm.unpricedRequests');
    this.#metrics.add('llm.promptTokens', promptTokens);
    this.#metrics.add('llm.completionTokens', completionTokens);
    this.#metrics.add('llm.costUsd', costUsd);
    meta.usage.promptTokens += promptTokens;
    meta.usage.completionTokens += completionTokens;
    meta.usage.costUsd += costUsd;
    if (meta.budget) meta.budget.used += promptTokens + completionTokens;
    return { promptTokens, completionTokens, costUsd };
  }

  #record(
    model: string,
    meta: RequestMeta,
    outcome: LlmOutcome,
    httpStatus: number | null,
    tokens: { promptTokens: number; completionTokens: number; costUsd: number },
    started: number,
  ): void {
    const durationMs = Date.now() - started;
    meta.usage.requests += 1;
    this.#metrics.add('llm.requests');
    this.#cache.recordCall({
      runId: this.#runId,
      item: meta.item,
      prompt: meta.prompt,
      model,
      purpose: meta.purpose,
      outcome,
      httpStatus,
      ...tokens,
      durationMs,
      cacheKey: meta.cacheKey,
    });
    this.#log.debug(
      { prompt: meta.prompt, model, item: meta.item, purpose: meta.purpose, outcome, status: httpStatus, durationMs, ...tokens },
      'LLM request',
    );
  }

  /** A cache hit costs nothing now, but its tokens count against a budget (so that replays behave alike). */
  #countHit(usage: MutableUsage, hit: LlmCacheEntry, budget: TokenBudget | undefined): void {
    usage.cacheHits += 1;
    this.#metrics.add('llm.cacheHits');
    if (budget) budget.used += hit.promptTokens + hit.completionTokens;
  }

  #logFailure(prompt: string, item: string | undefined, error: ModelFailure, more: boolean): void {
    this.#log.warn(
      { prompt, item, model: error.model, outcome: error.info.outcome, status: error.info.status, problem: error.info.message },
      more ? 'model failed; trying the fallback model' : 'model failed; no model left',
    );
  }
}

/** A signal aborted with its parent, detached from it by dispose(). */
function linkedSignal(parent: AbortSignal | undefined): { signal: AbortSignal | undefined; dispose(): void } {
  if (!parent) return { signal: undefined, dispose: () => undefined };
  const child = new AbortController();
  const onAbort = () => child.abort(parent.reason);
  if (parent.aborted) child.abort(parent.reason);
  else parent.addEventListener('abort', onAbort, { once: true });
  return { signal: child.signal, dispose: () => parent.removeEventListener('abort', onAbort) };
}

function newUsage(): MutableUsage {
  return { promptTokens: 0, completionTokens: 0, costUsd: 0, requests: 0, cacheHits: 0 };
}

function failure(outcome: FailureInfo['outcome'], retryable: boolean, message: string): FailureInfo {
  return { outcome, retryable, message, status: 200, retryAfterMs: null };
}

function checkBudget(budget: TokenBudget | undefined): void {
  if (budget && budget.used >= budget.limit) {
    throw new ItemError('llm-budget-exceeded', `the item's LLM token budget is spent (${budget.used} of ${budget.limit} tokens)`);
  }
}

function functionCalls(message: AnswerMessage): ToolCall[] {
  return (message.tool_calls ?? []).filter((c): c is ToolCall => c.type === 'function');
}

const TRANSIENT: ReadonlySet<FailureInfo['outcome']> = new Set(['rate-limited', 'timeout', 'connection', 'server-error', 'empty']);

/** Every model of the cascade failed: one OutsideServiceError named after the last failure. */
function exhausted(prompt: string, failures: readonly ModelFailure[]): OutsideServiceError {
  const last = failures.at(-1);
  const outcome = last?.info.outcome ?? 'server-error';
  const fix =
    outcome === 'model-not-found'
      ? 'check PERFMINE_MODEL / PERFMINE_FALLBACK_MODEL (llm.model, llm.fallbackModel) against the models the server offers'
      : outcome === 'endpoint-not-found'
        ? 'check OPENAI_BASE_URL (llm.baseUrl); it usually ends in /v1'
        : outcome === 'context-too-long'
          ? 'lower filter.maxDiffTokens so that the prompts fit the model'
          : undefined;
  return new OutsideServiceError('llm', LLM_REASONS[outcome], `${prompt}: ${failures.map((f) => f.message).join('; then ')}`, {
    ...(last?.info.status ? { status: last.info.status } : {}),
    // Worth running the item again later (the runner records it as failed; the next run retries it).
    retryable: TRANSIENT.has(outcome),
    ...(fix ? { fix } : {}),
  });
}

function repairText(error: string, format: JsonSchemaFormat): string {
  return [
    `Your previous answer could not be used: ${error}.`,
    'Answer again with only a JSON object (no prose, no code fence) that matches this JSON schema:',
    JSON.stringify(format.json_schema.schema),
  ].join('\n');
}

function finalNotice(maxTurns: number): string {
  return `You have used all ${maxTurns} tool turns. Do not call tools any more: reply now with your final answer as a JSON object matching the response schema.`;
}

async function runTool(byName: ReadonlyMap<string, AgentTool>, call: ToolCall, signal: AbortSignal | undefined): Promise<string> {
  const tool = byName.get(call.function.name);
  if (!tool) return `error: there is no tool named "${call.function.name}"; the tools are ${[...byName.keys()].join(', ')}`;
  let args: unknown;
  try {
    args = call.function.arguments?.trim() ? JSON.parse(call.function.arguments) : {};
  } catch (error) {
    return `error: the arguments of ${tool.name} are not valid JSON (${(error as Error).message})`;
  }
  try {
    return await tool.run(args, signal);
  } catch (error) {
    if (error instanceof PerfmineError) throw error;
    return `error: ${tool.name} failed: ${(error as Error)?.message ?? String(error)}`;
  }
}
