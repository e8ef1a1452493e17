import { getEventListeners } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LlmCache } from '../../cache/llm-cache.js';
import { openStore, type Db } from '../../cache/store.js';
import type { ConfigInput } from '../../pipeline/config/schema.js';
import { ConfigError, ItemError, OutsideServiceError } from '../../pipeline/errors.js';
import { Metrics } from '../../pipeline/metrics.js';
import { OpenAiLlmService } from '../../pipeline/services/llm.js';
import type { AgentTool } from '../../pipeline/services/llm-port.js';
import { reply, startLlmServer, type FakeLlmServer } from '../fakes/llm-server.js';
import { memoryLogger, testConfig } from '../helpers/context.js';

const API_KEY = 'sk-test-0123456789-secret';
const answerSchema = z.object({ answer: z.string(), confidence: z.number() });
const good = { answer: 'use np.add.reduceat', confidence: 0.9 };
/** Generous: an answer the loopback server gives at once must never hit it on a loaded machine; only hanging replies do. */
const TIMEOUT_MS = 3_000;

let promptsDir: string;
beforeAll(() => {
  promptsDir = mkdtempSync(join(tmpdir(), 'perfmine-prompts-'));
  writeFileSync(
    join(promptsDir, 'echo.md'),
    '---\nname: echo\ninputs: question\noutputs: answer (string), confidence (number)\n---\n## system\nAnswer the question.\n## user\n{{question}}\n',
  );
  writeFileSync(
    join(promptsDir, 'builder.md'),
    '---\nname: builder\ninputs: repo\noutputs: script (string)\n---\n## system\nWrite a build script; use the tools to look around.\n## user\nRepository: {{repo}}\n',
  );
});
afterAll(() => rmSync(promptsDir, { recursive: true, force: true }));

describe('OpenAiLlmService against a loopback server, through the real openai client', () => {
  let server: FakeLlmServer;
  let db: Db;
  let metrics: Metrics;
  let logged: string[];

  beforeEach(async () => {
    server = await startLlmServer();
    db = openStore(':memory:');
    metrics = new Metrics();
  });
  afterEach(async () => {
    await server.close();
    db.close();
    // The key never reaches a log line.
    expect(logged.join('\n')).not.toContain(API_KEY);
  });

  function service(llm: NonNullable<ConfigInput['llm']> = {}, sleep?: (ms: number) => Promise<void>) {
    const { log, lines } = memoryLogger();
    logged = lines;
    const config = testConfig({
      llm: {
        baseUrl: server.url,
        model: 'primary-model',
        fallbackModel: 'fallback-model',
        timeoutMs: TIMEOUT_MS,
        maxRetries: 1,
        retryBaseMs: 10,
        maxRetryAfterSeconds: 2,
        prices: { 'primary-model': { inputPerMTok: 2, outputPerMTok: 8 } },
        ...llm,
      },
    });
    return new OpenAiLlmService({
      config: config.llm,
      apiKey: API_KEY,
      db,
      log,
      metrics,
      queue: new PQueue({ concurrency: 2 }),
      promptsDir,
      runId: 7,
      ...(sleep ? { sleep } : {}),
    });
  }
  const ask = (svc: OpenAiLlmService, question = 'How to sum by group fast?', extra: object = {}) =>
    svc.structured({
      prompt: 'echo',
      inputs: { question },
      schema: answerSchema,
      schemaName: 'echo_answer',
      item: 'acme/fastlib#1',
      ...extra,
    });
  const calls = () => new LlmCache(db).calls();
  const failureOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      return error;
    }
    throw new Error('expected a failure');
  };

  it('a good answer: validated, accounted (tokens, cost, metrics, llm_calls) and cached', async () => {
    server.enqueue(reply.json(good, { promptTokens: 1000, completionTokens: 500 }));
    const svc = service();
    const result = await ask(svc);
    expect(result.value).toEqual(good);
    expect(result.model).toBe('primary-model');
    expect(result.usage).toEqual({ promptTokens: 1000, completionTokens: 500, costUsd: 0.006, requests: 1, cacheHits: 0 });

    const [request] = server.requests;
    expect(request).toMatchObject({
      model: 'primary-model',
      hasResponseFormat: true,
      schemaName: 'echo_answer',
      strict: true,
      hasTools: false,
      authorized: true,
    });
    expect(request!.system).toBe('Answer the question.');
    expect(request!.lastUser).toBe('How to sum by group fast?');

    expect(calls()).toMatchObject([
      {
        runId: 7,
        item: 'acme/fastlib#1',
        prompt: 'echo',
        model: 'primary-model',
        purpose: 'answer',
        outcome: 'ok',
        httpStatus: 200,
        promptTokens: 1000,
        completionTokens: 500,
        costUsd: 0.006,
      },
    ]);
    expect(metrics.snapshot()).toMatchObject({
      'llm.requests': 1,
      'llm.promptTokens': 1000,
      'llm.completionTokens': 500,
      'llm.costUsd': 0.006,
    });

    const again = await ask(service());
    expect(again.value).toEqual(good);
    expect(again.usage).toEqual({ promptTokens: 0, completionTokens: 0, costUsd: 0, requests: 0, cacheHits: 1 });
    expect(server.count()).toBe(1);
    expect(metrics.get('llm.cacheHits')).toBe(1);

    server.enqueue(reply.json({ answer: 'other', confidence: 0.1 }));
    await ask(service(), 'A different question?');
    expect(server.count()).toBe(2);
  });

  it('malformed JSON, then a good answer after the repair request', async () => {
    server.enqueue(reply.text('{"answer": "use reduceat", "confid'), reply.json(good));
    const result = await ask(service());
    expect(result.value).toEqual(good);
    expect(result.usage.requests).toBe(2);
    const repair = server.requests[1]!;
    expect(repair.model).toBe('primary-model');
    expect(repair.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(repair.messages[2]!.content).toBe('{"answer": "use reduceat", "confid');
    expect(repair.lastUser).toContain('not valid JSON');
    expect(calls().map((c) => [c.purpose, c.outcome])).toEqual([
      ['answer', 'malformed'],
      ['repair', 'ok'],
    ]);
    // Cached: the repaired answer is not asked for again.
    await ask(service());
    expect(server.count()).toBe(2);
  });

  it('JSON of the wrong shape twice: the fallback model answers', async () => {
    server.enqueue(reply.json({ answer: 3 }), reply.json({ answer: 'x' }), reply.json(good));
    const result = await ask(service());
    expect(result.model).toBe('fallback-model');
    expect(server.requests[1]!.lastUser).toContain('confidence');
    expect(server.requests.map((r) => r.model)).toEqual(['primary-model', 'primary-model', 'fallback-model']);
    expect(calls().map((c) => c.outcome)).toEqual(['malformed', 'malformed', 'ok']);
    // A rerun finds the fallback's cached answer without asking the primary again.
    await ask(service());
    expect(server.count()).toBe(3);
  });

  it('a refusal is not retried on the same model; the fallback answers; refused by both: llm-refused', async () => {
    server.enqueue(reply.refusal(), reply.json(good));
    expect((await ask(service())).model).toBe('fallback-model');
    expect(server.requests.map((r) => r.model)).toEqual(['primary-model', 'fallback-model']);

    server.clearRequests();
    server.enqueue(reply.refusal(), reply.refusal());
    const error = await failureOf(ask(service(), 'Another question?'));
    expect(error).toBeInstanceOf(OutsideServiceError);
    expect(error).toMatchObject({ reason: 'llm-refused', service: 'llm' });
    expect(server.count()).toBe(2);
    expect(calls().filter((c) => c.outcome === 'refused')).toHaveLength(3);
  });

  it('a 429 with retry-after: 1 is waited out, then the same model answers', async () => {
    server.enqueue(reply.rateLimit(1), reply.json(good));
    const result = await ask(service());
    expect(result).toMatchObject({ value: good, model: 'primary-model' });
    const [first, second] = server.requests;
    expect(second!.model).toBe('primary-model');
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(950);
    expect(calls().map((c) => [c.outcome, c.httpStatus])).toEqual([
      ['rate-limited', 429],
      ['ok', 200],
    ]);
  });

  it('a retry-after beyond llm.maxRetryAfterSeconds is not waited for: the fallback is asked at once', async () => {
    server.enqueue(reply.rateLimit(120), reply.json(good));
    // The service's waits go through this sleep: none may be asked for (a clock would make this
    // depend on the machine's load).
    const waits: number[] = [];
    const result = await ask(
      service({}, async (ms) => {
        waits.push(ms);
      }),
    );
    expect(result.model).toBe('fallback-model');
    expect(waits).toEqual([]);
    expect(calls().map((c) => c.outcome)).toEqual(['rate-limited', 'ok']);
  });

  it('rate-limited on every model: llm-rate-limited, retryable', async () => {
    server.script(() => reply.rateLimit(120));
    const error = await failureOf(ask(service()));
    expect(error).toMatchObject({ reason: 'llm-rate-limited', retryable: true, status: 429 });
  });

  it('a hanging server: each request times out after llm.timeoutMs, is retried once, then llm-timeout', async () => {
    server.script(() => reply.hang());
    const started = Date.now();
    const error = await failureOf(ask(service(), 'q', { models: 'primary' }));
    expect(error).toBeInstanceOf(OutsideServiceError);
    expect(error).toMatchObject({ reason: 'llm-timeout', retryable: true });
    expect(server.count()).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * TIMEOUT_MS);
    expect(calls().map((c) => c.outcome)).toEqual(['timeout', 'timeout']);
  });

  it('a 500 and an empty answer are retried on the same model', async () => {
    server.enqueue(reply.serverError(502), reply.json(good));
    expect((await ask(service())).model).toBe('primary-model');
    server.enqueue(reply.empty(), reply.json(good));
    expect((await ask(service(), 'second')).model).toBe('primary-model');
    expect(calls().map((c) => c.outcome)).toEqual(['server-error', 'ok', 'empty', 'ok']);
  });

  it('an unknown model cascades to the fallback; both unknown: llm-model-not-found with the fix', async () => {
    await server.close();
    server = await startLlmServer({ models: ['fallback-model'], knownModels: true, script: () => reply.json(good) });
    const svc = service();
    expect((await ask(svc)).model).toBe('fallback-model');
    expect(await svc.listModels()).toEqual(['fallback-model']);

    const error = await failureOf(ask(service({ fallbackModel: 'also-missing' }), 'other'));
    expect(error).toMatchObject({ reason: 'llm-model-not-found', status: 404 });
    expect((error as OutsideServiceError).fix).toContain('PERFMINE_MODEL');
  });

  it('401 is a configuration error (every item would fail alike)', async () => {
    server.enqueue({ kind: 'error', status: 401, message: 'Incorrect API key provided' });
    const error = await failureOf(ask(service()));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ reason: 'llm-unauthorized' });
  });

  it('a spent token budget stops before sending; cached answers count against it', async () => {
    server.enqueue(reply.json(good, { promptTokens: 80, completionTokens: 30 }));
    const budget = { limit: 100, used: 0 };
    await ask(service(), 'q1', { budget });
    expect(budget.used).toBe(110);
    const error = await failureOf(ask(service(), 'q2', { budget }));
    expect(error).toBeInstanceOf(ItemError);
    expect(error).toMatchObject({ reason: 'llm-budget-exceeded' });
    expect(server.count()).toBe(1);
    const replay = { limit: 100, used: 0 };
    await ask(service(), 'q1', { budget: replay });
    expect(replay.used).toBe(110);
  });

  it('leaves no listener behind on a run-long abort signal', async () => {
    server.script(() => reply.json(good));
    const controller = new AbortController();
    const svc = service();
    for (let i = 0; i < 12; i++) await ask(svc, `question ${i}`, { signal: controller.signal });
    expect(server.count()).toBe(12);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('an abort (shutdown) ends a hanging request as llm-aborted, without retrying', async () => {
    server.script(() => reply.hang());
    const controller = new AbortController();
    const pending = ask(service({ timeoutMs: 60_000 }), 'q', { signal: controller.signal });
    while (server.hanging === 0) await new Promise((r) => setImmediate(r));
    controller.abort();
    const error = await failureOf(pending);
    expect(error).toMatchObject({ reason: 'llm-aborted' });
    expect(server.count()).toBe(1);
  });

  describe('agent()', () => {
    const scriptSchema = z.object({ script: z.string() });
    function tools(log: string[]): AgentTool[] {
      return [
        {
          name: 'read_file',
          description: 'Reads a file of the repository.',
          parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
          run: async (args) => {
            const { path } = z.object({ path: z.string() }).parse(args);
            log.push(path);
            return path === 'setup.py'
              ? 'from setuptools import setup\nsetup(ext_modules=cythonize("fastlib/*.pyx"))'
              : `error: no file ${path}`;
          },
        },
      ];
    }
    const build = (svc: OpenAiLlmService, used: string[], extra: object = {}) =>
      svc.agent({
        prompt: 'builder',
        inputs: { repo: 'acme/fastlib' },
        schema: scriptSchema,
        schemaName: 'build_script',
        tools: tools(used),
        item: 'acme/fastlib@abc',
        ...extra,
      });

    it('runs tools by the caller’s handlers, answers from what the tools showed, and replays from the cache', async () => {
      // A scripted agent that answers according to what the conversation shows.
      server.script((r) =>
        r.lastToolResult?.includes('cythonize')
          ? reply.json({ script: 'pip install cython && pip install -e .' })
          : reply.toolCall('read_file', { path: 'setup.py' }),
      );
      const used: string[] = [];
      const result = await build(service(), used);
      expect(result.value.script).toContain('cython');
      expect(used).toEqual(['setup.py']);
      expect(server.requests.map((r) => [r.hasTools, r.hasResponseFormat, r.toolNames.join()])).toEqual([
        [true, true, 'read_file'],
        [true, true, 'read_file'],
      ]);
      expect(server.requests[1]!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
      expect(calls().map((c) => [c.purpose, c.outcome])).toEqual([
        ['agent-turn', 'ok'],
        ['agent-turn', 'ok'],
      ]);

      const replayed: string[] = [];
      const again = await build(service(), replayed);
      expect(again.value).toEqual(result.value);
      expect(again.usage).toMatchObject({ requests: 0, cacheHits: 2 });
      expect(replayed).toEqual(['setup.py']);
      expect(server.count()).toBe(2);
    });

    it('after maxTurns the tools are closed and a final answer is asked for', async () => {
      server.script((r) =>
        r.hasTools ? reply.toolCall('read_file', { path: `f${r.index}.py` }) : reply.json({ script: 'pip install -e .' }),
      );
      const used: string[] = [];
      const result = await build(service(), used, { maxTurns: 2 });
      expect(result.value.script).toBe('pip install -e .');
      expect(used).toEqual(['f0.py', 'f1.py']);
      const last = server.requests.at(-1)!;
      expect(last.hasTools).toBe(false);
      expect(last.lastUser).toContain('used all 2 tool turns');
      expect(calls().at(-1)).toMatchObject({ purpose: 'agent-final', outcome: 'ok' });
    });

    it('tells the model about an unknown tool or bad arguments, and repairs a malformed final answer', async () => {
      server.enqueue(
        reply.toolCall('rm_rf', {}),
        { kind: 'tool-calls', calls: [{ name: 'read_file', arguments: '{"path": ' }] },
        reply.text('here is the script: pip install -e .'),
        reply.json({ script: 'pip install -e .' }),
      );
      const used: string[] = [];
      const result = await build(service(), used);
      expect(result.value.script).toBe('pip install -e .');
      expect(used).toEqual([]);
      expect(server.requests[1]!.lastToolResult).toContain('no tool named "rm_rf"');
      expect(server.requests[2]!.lastToolResult).toContain('not valid JSON');
      expect(server.requests[3]!.lastUser).toContain('could not be used');
      expect(calls().map((c) => c.outcome)).toEqual(['ok', 'ok', 'malformed', 'ok']);
    });

    it('continues the conversation on the fallback model when the primary refuses', async () => {
      server.enqueue(reply.toolCall('read_file', { path: 'setup.py' }), reply.refusal(), reply.json({ script: 'pip install -e .' }));
      const result = await build(service(), []);
      expect(result.model).toBe('fallback-model');
      expect(server.requests.map((r) => r.model)).toEqual(['primary-model', 'primary-model', 'fallback-model']);
      expect(server.requests[2]!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    });
  });
});
