import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback OpenAI-compatible server (node:http on 127.0.0.1, port 0) with scripted answers, for
 * tests that drive the real `openai` client against it.
 *
 * Every POST /v1/chat/completions is recorded (model, messages, tools, response_format) and
 * answered by, in this order: the next queued reply (`enqueue`), the first matching rule (`when`),
 * the script function (`script`), else a 500 saying that nothing was scripted. GET /v1/models
 * lists `models`. With `knownModels`, a request for any other model gets a 404 model_not_found.
 *
 * Scripting by what the request shows (a build agent that answers according to the failure log):
 *
 *   const llm = await startLlmServer();
 *   llm.when((r) => r.schemaName === 'perf_intent', reply.json({ reasoning: 'vectorizes a loop', label: 'YES' }));
 *   llm.script((r) => r.lastUser.includes('ModuleNotFoundError: numpy')
 *     ? reply.json({ script: 'pip install numpy && pip install -e .' })
 *     : reply.toolCall('list_tree', { path: '.' }));
 *   // ... new OpenAI({ baseURL: llm.url, apiKey: 'test' }) ...
 *   expect(llm.count({ schemaName: 'perf_intent' })).toBe(1);
 *   await llm.close();
 */

export interface FakeUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export type FakeReply =
  /** 200 with `content` = JSON.stringify(value). */
  | { readonly kind: 'json'; readonly value: unknown; readonly usage?: FakeUsage }
  /** 200 with this exact content (malformed JSON, prose, a fenced block ...). */
  | { readonly kind: 'text'; readonly text: string; readonly finishReason?: 'stop' | 'length'; readonly usage?: FakeUsage }
  /** 200 with tool calls (finish_reason `tool_calls`); `arguments` objects are JSON-encoded, strings sent as they are. */
  | {
      readonly kind: 'tool-calls';
      readonly calls: readonly { readonly name: string; readonly arguments: unknown; readonly id?: string }[];
      readonly usage?: FakeUsage;
    }
  /** 200 with empty content and no tool call. */
  | { readonly kind: 'empty' }
  /** 200 with `message.refusal` set and content null. */
  | { readonly kind: 'refusal'; readonly text?: string }
  /** 429 with `retry-after` (seconds or an HTTP date) and/or `retry-after-ms`; `code` e.g. `insufficient_quota`. */
  | { readonly kind: 'rate-limit'; readonly retryAfter?: number | string; readonly retryAfterMs?: number; readonly code?: string }
  /** Never answers (until the client gives up or the server closes): for timeout tests. */
  | { readonly kind: 'hang' }
  /** 404 model_not_found, as the OpenAI API answers for an unknown model. */
  | { readonly kind: 'model-not-found' }
  /** Any HTTP error with an OpenAI-style error body (500 by default). */
  | {
      readonly kind: 'error';
      readonly status?: number;
      readonly message?: string;
      readonly code?: string;
      readonly headers?: Readonly<Record<string, string>>;
    };

/** Short constructors for replies. */
export const reply = {
  json: (value: unknown, usage?: FakeUsage): FakeReply => ({ kind: 'json', value, ...(usage ? { usage } : {}) }),
  text: (text: string, finishReason?: 'stop' | 'length'): FakeReply => ({ kind: 'text', text, ...(finishReason ? { finishReason } : {}) }),
  toolCall: (name: string, args: unknown, id?: string): FakeReply => ({
    kind: 'tool-calls',
    calls: [{ name, arguments: args, ...(id ? { id } : {}) }],
  }),
  toolCalls: (calls: readonly { name: string; arguments: unknown; id?: string }[]): FakeReply => ({ kind: 'tool-calls', calls }),
  empty: (): FakeReply => ({ kind: 'empty' }),
  refusal: (text = "I'm sorry, I can't help with that."): FakeReply => ({ kind: 'refusal', text }),
  rateLimit: (retryAfterSeconds?: number | string): FakeReply => ({
    kind: 'rate-limit',
    ...(retryAfterSeconds === undefined ? {} : { retryAfter: retryAfterSeconds }),
  }),
  hang: (): FakeReply => ({ kind: 'hang' }),
  modelNotFound: (): FakeReply => ({ kind: 'model-not-found' }),
  serverError: (status = 500, message = 'internal server error'): FakeReply => ({ kind: 'error', status, message }),
};

export interface RecordedMessage {
  readonly role: string;
  /** Text content (array content parts joined); '' when null. */
  readonly content: string;
  readonly toolCalls: readonly { readonly id: string; readonly name: string; readonly arguments: string }[];
  readonly toolCallId: string | null;
}

export interface RecordedRequest {
  /** 0-based, in arrival order. */
  readonly index: number;
  /** Date.now() when the request arrived. */
  readonly receivedAt: number;
  readonly method: string;
  readonly path: string;
  readonly model: string;
  readonly messages: readonly RecordedMessage[];
  readonly hasTools: boolean;
  readonly toolNames: readonly string[];
  readonly hasResponseFormat: boolean;
  /** `response_format.json_schema.name`, which tells which prompt asked. */
  readonly schemaName: string | null;
  readonly strict: boolean | null;
  /** Whether an `Authorization: Bearer ...` header came (its value is not kept). */
  readonly authorized: boolean;
  /** The whole JSON body. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The system message(s). */
  readonly system: string;
  /** The last user message. */
  readonly lastUser: string;
  /** The last tool result, if any. */
  readonly lastToolResult: string | null;
  /** Every message's content joined by newlines: for `includes` checks. */
  readonly text: string;
}

export type Script = (request: RecordedRequest) => FakeReply | Promise<FakeReply>;

export interface StartOptions {
  readonly script?: Script;
  readonly replies?: readonly FakeReply[];
  /** Listed by GET /v1/models; with `knownModels: true` other models get a 404. */
  readonly models?: readonly string[];
  readonly knownModels?: boolean;
}

export interface RequestFilter {
  readonly model?: string;
  readonly schemaName?: string;
  readonly path?: string;
}

export interface FakeLlmServer {
  /** Base URL for the openai client (`http://127.0.0.1:PORT/v1`). */
  readonly url: string;
  /** Every chat completion request, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Replies used first, in order, one per request. */
  enqueue(...replies: FakeReply[]): void;
  /** A rule: requests matching the predicate get this reply (or the function's reply). Rules are tried in order. */
  when(predicate: (request: RecordedRequest) => boolean, answer: FakeReply | Script): void;
  /** The fallback script when no queued reply or rule applies. */
  script(fn: Script): void;
  /** Requests matching the filter (all chat completion requests by default). */
  count(filter?: RequestFilter): number;
  /** Forgets the recorded requests (queue, rules and script stay). */
  clearRequests(): void;
  /** Requests still waiting on a `hang` reply. */
  readonly hanging: number;
  close(): Promise<void>;
}

export async function startLlmServer(options: StartOptions = {}): Promise<FakeLlmServer> {
  const queue: FakeReply[] = [...(options.replies ?? [])];
  const rules: { predicate: (r: RecordedRequest) => boolean; answer: FakeReply | Script }[] = [];
  let fallback: Script | undefined = options.script;
  const requests: RecordedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const models = options.models ?? ['fake-model'];

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, {
          error: { message: `fake server: ${(error as Error).message}`, type: 'server_error', param: null, code: null },
        });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const raw = await readBody(req);
    if (req.method === 'GET' && /\/models$/.test(path)) {
      sendJson(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })) });
      return;
    }
    if (req.method !== 'POST' || !/\/chat\/completions$/.test(path)) {
      sendJson(res, 404, {
        error: { message: `fake server: no route ${req.method} ${path}`, type: 'invalid_request_error', param: null, code: null },
      });
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      sendJson(res, 400, { error: { message: 'fake server: body is not JSON', type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    const recorded = record(requests.length, req, path, body);
    requests.push(recorded);

    let answer: FakeReply;
    if (options.knownModels && !models.includes(recorded.model)) answer = { kind: 'model-not-found' };
    else if (queue.length > 0) answer = queue.shift()!;
    else {
      const rule = rules.find((r) => r.predicate(recorded));
      if (rule) answer = typeof rule.answer === 'function' ? await rule.answer(recorded) : rule.answer;
      else if (fallback) answer = await fallback(recorded);
      else answer = { kind: 'error', status: 500, message: 'fake server: no scripted reply for this request' };
    }
    respond(res, recorded, answer);
  }

  function respond(res: ServerResponse, request: RecordedRequest, answer: FakeReply): void {
    switch (answer.kind) {
      case 'hang':
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      case 'rate-limit': {
        const headers: Record<string, string> = {};
        if (answer.retryAfter !== undefined) headers['retry-after'] = String(answer.retryAfter);
        if (answer.retryAfterMs !== undefined) headers['retry-after-ms'] = String(answer.retryAfterMs);
        sendJson(
          res,
          429,
          {
            error: {
              message: 'Rate limit reached for requests',
              type: 'requests',
              param: null,
              code: answer.code ?? 'rate_limit_exceeded',
            },
          },
          headers,
        );
        return;
      }
      case 'model-not-found':
        sendJson(res, 404, {
          error: {
            message: `The model \`${request.model}\` does not exist or you do not have access to it.`,
            type: 'invalid_request_error',
            param: null,
            code: 'model_not_found',
          },
        });
        return;
      case 'error':
        sendJson(
          res,
          answer.status ?? 500,
          { error: { message: answer.message ?? 'internal server error', type: 'server_error', param: null, code: answer.code ?? null } },
          answer.headers ?? {},
        );
        return;
      case 'json':
        sendJson(res, 200, completion(request, { content: JSON.stringify(answer.value) }, 'stop', answer.usage));
        return;
      case 'text':
        sendJson(res, 200, completion(request, { content: answer.text }, answer.finishReason ?? 'stop', answer.usage));
        return;
      case 'empty':
        sendJson(res, 200, completion(request, { content: '' }, 'stop'));
        return;
      case 'refusal':
        sendJson(res, 200, completion(request, { content: null, refusal: answer.text ?? "I can't help with that." }, 'stop'));
        return;
      case 'tool-calls': {
        const toolCalls = answer.calls.map((c, i) => ({
          id: c.id ?? `call_${request.index}_${i}`,
          type: 'function',
          function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
        }));
        sendJson(res, 200, completion(request, { content: null, tool_calls: toolCalls }, 'tool_calls', answer.usage));
        return;
      }
    }
  }

  // Idle keep-alive sockets are left to the client to close (undici closes them a second before
  // the server's advertised timeout). With Node's default of 5 s the server could close one just
  // as a client on a loaded machine reused it: in a slow run of .ci/run one classify request of the demo
  // month failed with "fetch failed" (the e2e suite allows no retry, to count the prompts).
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const matches = (r: RecordedRequest, f: RequestFilter) =>
    (f.model === undefined || r.model === f.model) &&
    (f.schemaName === undefined || r.schemaName === f.schemaName) &&
    (f.path === undefined || r.path === f.path);

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    when: (predicate, answer) => void rules.push({ predicate, answer }),
    script: (fn) => {
      fallback = fn;
    },
    count: (filter = {}) => requests.filter((r) => matches(r, filter)).length,
    clearRequests: () => void requests.splice(0, requests.length),
    get hanging() {
      return hanging.size;
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function record(index: number, req: IncomingMessage, path: string, body: Record<string, unknown>): RecordedRequest {
  const rawMessages = Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : [];
  const messages: RecordedMessage[] = rawMessages.map((m) => ({
    role: String(m.role ?? ''),
    content: contentText(m.content),
    toolCalls: Array.isArray(m.tool_calls)
      ? (m.tool_calls as { id?: string; function?: { name?: string; arguments?: string } }[]).map((c) => ({
          id: String(c.id ?? ''),
          name: String(c.function?.name ?? ''),
          arguments: String(c.function?.arguments ?? ''),
        }))
      : [],
    toolCallId: typeof m.tool_call_id === 'string' ? m.tool_call_id : null,
  }));
  const tools = Array.isArray(body.tools) ? (body.tools as { function?: { name?: string } }[]) : [];
  const format = body.response_format as { type?: string; json_schema?: { name?: string; strict?: boolean } } | undefined;
  const byRole = (role: string) => messages.filter((m) => m.role === role);
  return {
    index,
    receivedAt: Date.now(),
    method: req.method ?? 'POST',
    path,
    model: String(body.model ?? ''),
    messages,
    hasTools: tools.length > 0,
    toolNames: tools.map((t) => String(t.function?.name ?? '')),
    hasResponseFormat: format !== undefined,
    schemaName: format?.json_schema?.name ?? null,
    strict: format?.json_schema?.strict ?? null,
    authorized: /^Bearer \S+/.test(String(req.headers.authorization ?? '')),
    body,
    system: byRole('system')
      .map((m) => m.content)
      .join('\n'),
    lastUser: byRole('user').at(-1)?.content ?? '',
    lastToolResult: byRole('tool').at(-1)?.content ?? null,
    text: messages.map((m) => m.content).join('\n'),
  };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((p) => (typeof p === 'object' && p && 'text' in p ? String((p as { text: unknown }).text) : '')).join('');
  return '';
}

function completion(request: RecordedRequest, message: Record<string, unknown>, finishReason: string, usage?: FakeUsage) {
  const promptTokens = usage?.promptTokens ?? Math.ceil(request.text.length / 4);
  const content = typeof message.content === 'string' ? message.content : JSON.stringify(message.tool_calls ?? message.refusal ?? '');
  const completionTokens = usage?.completionTokens ?? Math.ceil(content.length / 4);
  return {
    id: `chatcmpl-fake-${request.index}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    choices: [{ index: 0, message: { role: 'assistant', refusal: null, ...message }, finish_reason: finishReason, logprobs: null }],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
