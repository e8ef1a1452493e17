import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../cache/store.js';
import { reply, startLlmServer, type FakeLlmServer, type RecordedRequest } from '../fakes/llm-server.js';
import { tempDir } from '../helpers/harness.js';
import { makePullRequest, storeCollected } from '../helpers/pull-request.js';
import { copyDb, count, doneKeys, killPoint, LEDGER, runToEnd, snapshot, startCli, type RunningCli, type TableSpec } from './kill.js';

const OBSERVATION = 'Summing 10 million values with fastlib.total takes 4.2 s because of a Python loop.';
const PRS = 8;
// Kill points: the first request, the middle, the last few requests.
const SEEDS = [7, 14, 4];
const TABLES: readonly TableSpec[] = [
  LEDGER,
  { table: 'llm_cache', omit: ['created_at'] },
  // Every request is accounted once: a rerun that asked again would add rows.
  { table: 'llm_calls', omit: ['id', 'run_id', 'duration_ms', 'created_at'] },
];
const PROMPT_OF: Record<string, string> = {
  perf_intent: 'perf-intent',
  problem_extract: 'problem-extract',
  optimization_category: 'optimization-category',
};

/** The item a request is about (its pull request's tag) and the prompt that asked. */
function subject(r: RecordedRequest): string {
  const n = /\[pr-(\d+)\]/.exec(r.text)?.[1];
  return `acme/fastlib#${n}:${PROMPT_OF[r.schemaName ?? ''] ?? r.schemaName}`;
}

/** Answers by content only (never by arrival order), so that every run gets the same answers. */
function answer(r: RecordedRequest) {
  const n = Number(/\[pr-(\d+)\]/.exec(r.text)?.[1]);
  if (r.schemaName === 'perf_intent')
    return reply.json(
      n % 4 === 3 ? { reasoning: `#${n} documents, not speed.`, label: 'NO' } : { reasoning: `#${n} removes a Python loop.`, label: 'YES' },
    );
  if (r.schemaName === 'problem_extract')
    return reply.json({ initial_observations: [OBSERVATION], triage_attempts: [], solution_overview: [], solution_observations: [] });
  if (r.schemaName === 'optimization_category')
    return reply.json({
      reasoning: `#${n}: loop to NumPy.`,
      category: 'use_lower_level_system',
      difficulty: n % 2 === 0 ? 'easy' : 'medium',
    });
  return reply.serverError(500, 'unexpected prompt');
}

/**
 * SIGKILL of `perfmine stage classify` (real LLM adapter, loopback OpenAI-compatible server) at a
 * seeded LLM request: the k-th request is held unanswered and the CLI is killed while it waits.
 * The rerun must end with the rows of an uninterrupted run (ledger, LLM cache, request
 * accounting), and must ask the server nothing it had already answered before the kill.
 */
describe('SIGKILL during classify', () => {
  let server: FakeLlmServer;
  let dir: string;
  let filtered: string;
  let referenceDb: string;
  let referenceRequests = 0;
  let env: Record<string, string>;
  const args = (db: string) => ['--db', db, 'stage', 'classify', '--month', '2025-04', '--json'];

  beforeAll(async () => {
    dir = tempDir('perfmine-kill-classify-');
    server = await startLlmServer({ script: answer });
    env = {
      OPENAI_API_KEY: 'sk-kill-test',
      OPENAI_BASE_URL: server.url,
      PERFMINE_MODEL: 'primary-model',
      PERFMINE_FALLBACK_MODEL: 'fallback-model',
      // One request at a time: the k-th request is the same one in every run.
      PERFMINE_LLM_CONCURRENCY: '1',
      PERFMINE_LOG_FORMAT: 'json',
      PERFMINE_LOG_LEVEL: 'warn',
    };
    filtered = join(dir, 'filtered.db');
    const db = openStore(filtered);
    for (let n = 1; n <= PRS; n++) {
      storeCollected(
        db,
        makePullRequest({
          number: n,
          title: `PERF: speed up total [pr-${n}]`,
          body: `${OBSERVATION}\n\nThis PR uses np.add.reduce instead.`,
          mergedAt: `2025-04-${String(n + 1).padStart(2, '0')}T12:00:00Z`,
        }),
      );
    }
    db.close();
    const filter = await runToEnd(['--db', filtered, 'stage', 'filter', '--month', '2025-04'], { env });
    expect(filter.code, filter.stderr).toBe(0);

    referenceDb = join(dir, 'reference.db');
    copyDb(filtered, referenceDb);
    const reference = await runToEnd(args(referenceDb), { env });
    expect(reference.code, reference.stderr).toBe(0);
    expect(JSON.parse(reference.stdout).stages[0]).toMatchObject({ done: 6, dropped: { 'not-performance': 2 }, failed: {} });
    referenceRequests = server.count();
    expect(referenceRequests).toBe(6 * 3 + 2);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const seed of SEEDS) {
    it(`seed ${seed}: the rerun gives the rows of an uninterrupted run and asks nothing answered before the kill`, async () => {
      const k = killPoint(seed, referenceRequests);
      const db = join(dir, `crashed-${seed}.db`);
      copyDb(filtered, db);
      server.clearRequests();
      // Armed before the CLI starts (it is assigned synchronously, before any request can arrive).
      let cli: RunningCli | undefined;
      server.script((r) => {
        if (server.count() !== k) return answer(r);
        cli!.kill();
        return reply.hang();
      });
      cli = startCli(args(db), { env });
      const killed = await cli.done;
      server.script(answer);
      expect(killed.signal).toBe('SIGKILL');
      expect(server.count()).toBe(k);

      const classifiedBefore = [...doneKeys(db, 'classify'), ...doneKeys(db, 'classify', 'dropped')];
      const answeredBefore = answeredCalls(db);
      expect(answeredBefore.size).toBe(k - 1);

      server.clearRequests();
      const rerun = await runToEnd(args(db), { env });
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(JSON.parse(rerun.stdout).stages[0]).toMatchObject({
        planned: PRS,
        reused: classifiedBefore.length,
        ran: PRS - classifiedBefore.length,
        failed: {},
      });

      expect(snapshot(db, TABLES)).toEqual(snapshot(referenceDb, TABLES));
      const askedAgain = server.requests.map(subject);
      expect(askedAgain.filter((s) => answeredBefore.has(s))).toEqual([]);
      expect(askedAgain.filter((s) => classifiedBefore.some((key) => s.startsWith(`${key}:`)))).toEqual([]);
      expect(askedAgain).toHaveLength(referenceRequests - (k - 1));
      expect(count(db, "SELECT COUNT(*) AS n FROM runs WHERE status = 'crashed'")).toBe(1);
    }, 120_000);
  }
});

/** `item:prompt` of every request the server answered (and the adapter recorded) before the kill. */
function answeredCalls(path: string): Set<string> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare("SELECT item, prompt FROM llm_calls WHERE outcome = 'ok'").all() as { item: string; prompt: string }[];
    return new Set(rows.map((r) => `${r.item}:${r.prompt}`));
  } finally {
    db.close();
  }
}
