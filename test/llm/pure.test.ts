import { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../../pipeline/errors.js';
import { describeFailure, LLM_REASONS, parseRetryAfter } from '../../pipeline/services/llm-failures.js';
import { isLocalBaseUrl, PLACEHOLDER_API_KEY, resolveLlmApiKey } from '../../pipeline/services/llm-key.js';
import { parseAnswer, responseFormatFor, schemaName } from '../../pipeline/services/llm-schema.js';
import { testConfig } from '../helpers/context.js';

const headers = (h: Record<string, string>) => new Headers(h);

describe('retry-after', () => {
  it('reads retry-after-ms, seconds, and HTTP dates', () => {
    expect(parseRetryAfter(headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(parseRetryAfter(headers({ 'retry-after': '3' }))).toBe(3000);
    expect(parseRetryAfter(headers({ 'retry-after': '1.5' }))).toBe(1500);
    const now = Date.parse('2025-04-01T00:00:00Z');
    expect(parseRetryAfter(headers({ 'retry-after': 'Tue, 01 Apr 2025 00:00:10 GMT' }), now)).toBe(10_000);
    expect(parseRetryAfter(headers({ 'retry-after': 'soon' }))).toBeNull();
    expect(parseRetryAfter(headers({}))).toBeNull();
  });
});

describe('describeFailure', () => {
  const api = (status: number, body: object, h: Record<string, string> = {}) => APIError.generate(status, body, undefined, headers(h));
  it.each([
    [api(429, { error: { message: 'slow down', code: 'rate_limit_exceeded' } }, { 'retry-after': '2' }), 'rate-limited', true, 2000],
    [api(429, { error: { message: 'quota', code: 'insufficient_quota' } }), 'quota-exhausted', false, null],
    [api(404, { error: { message: 'The model `x` does not exist', code: 'model_not_found' } }), 'model-not-found', false, null],
    [api(404, { error: { message: 'Not Found' } }), 'endpoint-not-found', false, null],
    [
      api(400, { error: { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' } }),
      'context-too-long',
      false,
      null,
    ],
    [api(401, { error: { message: 'Incorrect API key' } }), 'unauthorized', false, null],
    [api(503, { error: { message: 'overloaded' } }), 'server-error', true, null],
    [new APIConnectionTimeoutError(), 'timeout', true, null],
    [new APIUserAbortError(), 'aborted', false, null],
  ])('%#: %s', (error, outcome, retryable, retryAfterMs) => {
    const info = describeFailure(error);
    expect(info).toMatchObject({ outcome, retryable, retryAfterMs });
    if (info.outcome !== 'aborted') expect(LLM_REASONS[info.outcome]).toMatch(/^llm-[a-z-]+$/);
  });
});

describe('response format', () => {
  it('asks for strict mode only when the schema allows it', () => {
    const strict = responseFormatFor(z.object({ a: z.string(), b: z.array(z.object({ c: z.enum(['x', 'y']) })) }), 'perf intent!');
    expect(strict.json_schema.strict).toBe(true);
    expect(strict.json_schema.name).toBe('perf_intent_');
    expect(strict.json_schema.schema.$schema).toBeUndefined();
    expect(responseFormatFor(z.object({ a: z.string().optional() }), 'x').json_schema.strict).toBe(false);
    expect(schemaName('')).toBe('answer');
  });

  it('parses JSON (also in a fence) and names what does not match', () => {
    const schema = z.object({ label: z.enum(['YES', 'NO']) });
    expect(parseAnswer(schema, '```json\n{"label":"YES"}\n```')).toMatchObject({ ok: true, value: { label: 'YES' } });
    expect(parseAnswer(schema, '{"label":')).toMatchObject({ ok: false, error: expect.stringContaining('not valid JSON') });
    expect(parseAnswer(schema, '{"label":"maybe"}')).toMatchObject({ ok: false, error: expect.stringContaining('label') });
  });
});

describe('API key resolution', () => {
  it('uses OPENAI_API_KEY when set', () => {
    expect(resolveLlmApiKey(testConfig().llm, { openaiApiKey: 'sk-real' })).toEqual({ apiKey: 'sk-real', placeholder: false });
  });
  it('uses a placeholder for a local server only', () => {
    expect(resolveLlmApiKey(testConfig({ llm: { baseUrl: 'http://127.0.0.1:8000/v1' } }).llm, { openaiApiKey: undefined })).toEqual({
      apiKey: PLACEHOLDER_API_KEY,
      placeholder: true,
    });
    for (const url of [
      'http://localhost:11434/v1',
      'http://10.1.2.3/v1',
      'http://192.168.0.9:8000/v1',
      'http://172.20.0.2/v1',
      'http://[::1]:8000/v1',
      'http://gpu-box.local/v1',
    ]) {
      expect(isLocalBaseUrl(url)).toBe(true);
    }
    for (const url of ['https://api.openai.com/v1', 'http://172.32.0.1/v1', 'http://8.8.8.8/v1', 'not a url'])
      expect(isLocalBaseUrl(url)).toBe(false);
  });
  it('fails with a message naming the variable and --llm none', () => {
    let error: unknown;
    try {
      resolveLlmApiKey(testConfig({ llm: { baseUrl: 'https://llm.example.com/v1' } }).llm, { openaiApiKey: undefined });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain('OPENAI_API_KEY');
    expect((error as ConfigError).fix).toContain('--llm none');
    expect((error as ConfigError).reason).toBe('missing-credential');
  });
});
