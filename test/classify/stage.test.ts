import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LlmCache } from '../../cache/llm-cache.js';
import { openStore, type Db } from '../../cache/store.js';
import type { Config } from '../../pipeline/config/schema.js';
import { ConfigError } from '../../pipeline/errors.js';
import { runStage } from '../../pipeline/runner.js';
import { classifyStage } from '../../stages/classify/index.js';
import { classifyOutputSchema } from '../../pipeline/concepts/records/classify-output.js';
import type { PullRequest } from '../../pipeline/concepts/records/pull-request.js';
import { filterStage } from '../../stages/filter/index.js';
import { reply, startLlmServer, type FakeLlmServer, type RecordedRequest } from '../fakes/llm-server.js';
import { credentials, memoryLogger, monthScope, testConfig, testContext } from '../helpers/context.js';
import { makePullRequest, storeCollected } from '../helpers/pull-request.js';

const OBSERVATION = 'Calling fastlib.total on a list of 10 million floats takes 4.2 s, most of it in the Python loop.';

/** A candidate whose title carries a tag the scripted server reacts to. */
function candidate(number: number, tag: string, overrides: Partial<PullRequest> = {}): PullRequest {
  return makePullRequest({
    number,
    title: `PERF: speed up total [${tag}]`,
    body: `${OBSERVATION}\n\nThis PR replaces the loop with np.add.reduce, which is 30x faster on that input.`,
    ...overrides,
  });
}

/** The scripted LLM: answers per prompt (schema name) and per candidate (the tag in its text). */
function scriptedAnswers(server: FakeLlmServer): void {
  const seen = new Map<string, number>();
  const nth = (r: RecordedRequest, tag: string) => {
    const key = `${tag}:${r.schemaName}`;
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    return n;
  };
  server.script((r) => {
    const tag = /\[([a-z-]+)\]/.exec(r.text)?.[1] ?? 'good';
    if (tag === 'hang') return reply.hang();
    if (r.schemaName === 'perf_intent') {
      if (tag === 'refuse') return reply.refusal();
      if (tag === 'malformed' && nth(r, tag) === 0) return reply.text('{"reasoning": "replaces a loop", "label": YES}');
      if (tag === 'rate-limited' && nth(r, tag) === 0) return reply.rateLimit(1);
      if (tag === 'not-perf') return reply.json({ reasoning: 'Adds a keyword; speed is not the goal.', label: 'NO' });
      return reply.json({ reasoning: 'Replaces a Python loop by np.add.reduce with a measured 30x speedup.', label: 'YES' });
    }
    if (r.schemaName === 'problem_extract') {
      const initial =
        tag === 'invented' ? ['The function total was written in 1998 and nobody understood it.'] : [OBSERVATION, 'Thanks for the review!'];
      return reply.json({
        initial_observations: initial,
        triage_attempts: [],
        solution_overview: ['This PR replaces the loop with np.add.reduce, which is 30x faster on that input.'],
        solution_observations: [],
      });
    }
    if (r.schemaName === 'optimization_category') {
      return reply.json({ reasoning: 'A Python loop becomes a NumPy reduction.', category: 'use_lower_level_system', difficulty: 'easy' });
    }
    return reply.serverError(500, 'unexpected prompt');
  });
}

/**
 * The LLM time limit: the `hang` item must hit it (four times: two attempts on each model), and
 * every other answer, which the loopback server gives at once, must never come near it, however
 * loaded the machine. 200 ms failed 2 runs of 3 on a loaded 2-core machine; 3 s leaves a margin
 * of orders of magnitude and costs the hanging item 12 s.
 */
const LLM_TIMEOUT_MS = 3000;

function llmConfig(server: FakeLlmServer, extra: Partial<Config['llm']> = {}): Config {
  return testConfig({
    llm: {
      baseUrl: server.url,
      model: 'primary-model',
      fallbackModel: 'fallback-model',
      timeoutMs: LLM_TIMEOUT_MS,
      maxRetries: 1,
      retryBaseMs: 10,
      maxRetryAfterSeconds: 2,
      ...extra,
    },
  });
}

describe('classify stage against the loopback LLM server', () => {
  let server: FakeLlmServer;
  let db: Db;

  beforeEach(async () => {
    server = await startLlmServer();
    scriptedAnswers(server);
    db = openStore(':memory:');
  });
  afterEach(async () => {
    await server.close();
    db.close();
  });

  async function filtered(prs: PullRequest[], config: Config) {
    for (const pr of prs) storeCollected(db, pr);
    const { log, lines } = memoryLogger(['sk-test-key-42']);
    const ctx = testContext(db, { config, credentials: credentials({ openaiApiKey: 'sk-test-key-42' }), log });
    await runStage(ctx, filterStage, monthScope());
    return { ctx, lines };
  }

  it('records each outcome (done, dropped by reason, failed by LLM reason) without crashing the stage', async () => {
    const { ctx, lines } = await filtered(
      [
        candidate(1, 'good'),
        candidate(2, 'not-perf'),
        candidate(3, 'invented'),
        candidate(4, 'refuse'),
        candidate(5, 'malformed'),
        candidate(6, 'rate-limited'),
        candidate(7, 'hang'),
      ],
      llmConfig(server),
    );
    const report = await runStage(ctx, classifyStage, monthScope());
    expect(report).toMatchObject({
      planned: 7,
      ran: 7,
      done: 3,
      dropped: { 'not-performance': 1, 'no-initial-observations': 1 },
      failed: { 'llm-refused': 1, 'llm-timeout': 1 },
      failedKinds: { 'outside-service': 2 },
    });

    const good = classifyOutputSchema.parse(ctx.ledger.get('classify', 'acme/fastlib#1')!.output);
    expect(good).toMatchObject({
      classifier: 'primary-model',
      category: 'use_lower_level_system',
      difficulty: 'easy',
      problemSource: 'extracted',
      categoryModel: 'primary-model',
      problem: { initialObservations: [OBSERVATION], droppedSentences: 1 },
    });
    expect(good.problemStatement).toContain(OBSERVATION);
    expect(good.problemStatement).not.toContain('np.add.reduce');
    expect(good.problemStatement).not.toContain('Thanks for the review');

    expect(ctx.ledger.get('classify', 'acme/fastlib#2')).toMatchObject({
      status: 'dropped',
      reason: 'not-performance',
      detail: expect.stringContaining('Adds a keyword'),
    });
    expect(ctx.ledger.get('classify', 'acme/fastlib#3')).toMatchObject({ status: 'dropped', reason: 'no-initial-observations' });
    expect(ctx.ledger.get('classify', 'acme/fastlib#4')).toMatchObject({
      status: 'failed',
      reason: 'llm-refused',
      errorKind: 'outside-service',
    });
    expect(ctx.ledger.get('classify', 'acme/fastlib#5')).toMatchObject({ status: 'done' });
    expect(ctx.ledger.get('classify', 'acme/fastlib#6')).toMatchObject({ status: 'done' });
    expect(ctx.ledger.get('classify', 'acme/fastlib#7')).toMatchObject({ status: 'failed', reason: 'llm-timeout' });

    // What each scripted failure cost, as recorded per request.
    const outcomes = (item: string) => new LlmCache(db).calls({ item }).map((c) => `${c.prompt}:${c.outcome}`);
    expect(outcomes('acme/fastlib#4')).toEqual(['perf-intent:refused', 'perf-intent:refused']);
    expect(outcomes('acme/fastlib#5').slice(0, 2)).toEqual(['perf-intent:malformed', 'perf-intent:ok']);
    expect(outcomes('acme/fastlib#6').slice(0, 2)).toEqual(['perf-intent:rate-limited', 'perf-intent:ok']);
    expect(outcomes('acme/fastlib#7')).toEqual([
      'perf-intent:timeout',
      'perf-intent:timeout',
      'perf-intent:timeout',
      'perf-intent:timeout',
    ]);
    const rateLimited = server.requests.filter((r) => r.text.includes('[rate-limited]') && r.schemaName === 'perf_intent');
    expect(rateLimited[1]!.receivedAt - rateLimited[0]!.receivedAt).toBeGreaterThanOrEqual(950);

    expect(ctx.metrics.get('llm.requests')).toBe(server.count());
    expect(lines.join('\n')).not.toContain('sk-test-key-42');
    expect(lines.some((l) => l.includes('"stage":"classify"') && l.includes('"item":"acme/fastlib#7"') && l.includes('item failed'))).toBe(
      true,
    );
  });

  it('a second run makes zero LLM requests: decided items are reused, and forced ones come from the cache', async () => {
    const { ctx } = await filtered([candidate(1, 'good'), candidate(2, 'not-perf'), candidate(3, 'malformed')], llmConfig(server));
    const first = await runStage(ctx, classifyStage, monthScope());
    expect(first).toMatchObject({ done: 2, dropped: { 'not-performance': 1 } });
    const asked = server.count();
    expect(asked).toBe(3 + 1 + 4); // 3 prompts for #1, the judge for #2, 3 prompts + 1 repair for #3
    const before = ctx.ledger.get('classify', 'acme/fastlib#1')!.output;

    const second = await runStage(ctx, classifyStage, monthScope());
    expect(second).toMatchObject({ reused: 3, ran: 0 });
    const forced = await runStage(ctx, classifyStage, monthScope(), { force: true });
    expect(forced).toMatchObject({ ran: 3, done: 2, dropped: { 'not-performance': 1 } });
    expect(server.count()).toBe(asked);
    expect(ctx.ledger.get('classify', 'acme/fastlib#1')!.output).toEqual(before);
  });

  it('a failed item runs again next time; the decided ones are not asked again', async () => {
    const { ctx } = await filtered([candidate(1, 'good'), candidate(7, 'hang')], llmConfig(server, { fallbackModel: undefined }));
    expect(await runStage(ctx, classifyStage, monthScope())).toMatchObject({ done: 1, failed: { 'llm-timeout': 1 } });
    server.clearRequests();
    server.script(() => reply.json({ reasoning: 'a', label: 'NO' })); // the server recovered
    expect(await runStage(ctx, classifyStage, monthScope())).toMatchObject({
      reused: 1,
      ran: 1,
      done: 1,
      dropped: { 'not-performance': 1 },
    });
    expect(server.requests.every((r) => r.text.includes('[hang]'))).toBe(true);
  });

  it('--llm none: no LLM at all; YES only on a title or body cue, marked heuristic', async () => {
    const { ctx } = await filtered(
      [
        candidate(1, 'good'),
        makePullRequest({ number: 2, title: 'Rework the block manager', body: 'Internal cleanup.', labels: ['Performance'] }),
      ],
      testConfig({ llm: { mode: 'none', baseUrl: server.url } }),
    );
    const noKey = testContext(db, { config: testConfig({ llm: { mode: 'none' } }), credentials: credentials() });
    const report = await runStage(noKey, classifyStage, monthScope());
    expect(report).toMatchObject({ done: 1, dropped: { 'no-perf-cue': 1 } });
    const out = classifyOutputSchema.parse(noKey.ledger.get('classify', 'acme/fastlib#1')!.output);
    // the default diff replaces a Python loop by a NumPy call, in 16 changed lines of one file
    expect(out).toMatchObject({
      classifier: 'heuristic',
      problemSource: 'measured',
      category: 'use_lower_level_system',
      difficulty: 'easy',
      categoryModel: 'heuristic',
    });
    expect(out.categoryReason).toContain('a Python loop replaced by NumPy calls (np.add.at)');
    expect(out.leakCheck).toMatchObject({ basis: 'diff', coreFiles: ['fastlib/core.py'] });
    expect(server.count()).toBe(0);
    expect(ctx.ledger.get('classify', 'acme/fastlib#2')).toMatchObject({ status: 'dropped', reason: 'no-perf-cue' });
  });

  it('without OPENAI_API_KEY the preflight stops the stage before any item, naming the variable and --llm none', async () => {
    await filtered([candidate(1, 'good')], llmConfig(server));
    const remote = testContext(db, { config: testConfig({ llm: { baseUrl: 'https://llm.example.com/v1' } }), credentials: credentials() });
    let error: unknown;
    try {
      await runStage(remote, classifyStage, monthScope());
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(String((error as ConfigError).message)).toContain('OPENAI_API_KEY');
    expect((error as ConfigError).fix).toContain('--llm none');
    expect(remote.ledger.get('classify', 'acme/fastlib#1')).toBeUndefined();

    // A local server needs no key: a placeholder is sent.
    const local = testContext(db, { config: llmConfig(server), credentials: credentials() });
    expect(await runStage(local, classifyStage, monthScope())).toMatchObject({ done: 1 });
    expect(server.requests.every((r) => r.authorized)).toBe(true);
  });
});
