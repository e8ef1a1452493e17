import type { Db } from './store.js';
import { nowIso } from './store.js';

export type LlmCacheKind = 'structured' | 'agent-turn';

export interface LlmCacheEntry {
  readonly key: string;
  readonly kind: LlmCacheKind;
  readonly prompt: string;
  readonly model: string;
  /** Parsed JSON of the stored response. */
  readonly response: unknown;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly costUsd: number;
  readonly createdAt: string;
}

/** One HTTP request sent to the LLM server (never a cache hit: those cost nothing). */
export interface LlmCallRecord {
  readonly runId: number | null;
  readonly item: string | null;
  readonly prompt: string;
  readonly model: string;
  readonly purpose: 'answer' | 'repair' | 'agent-turn' | 'agent-final';
  readonly outcome: string;
  readonly httpStatus: number | null;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly costUsd: number;
  readonly durationMs: number;
  readonly cacheKey: string | null;
}

export interface LlmCallTotals {
  readonly requests: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly costUsd: number;
  /** Requests by outcome. */
  readonly outcomes: Record<string, number>;
}

interface RawEntry {
  key: string;
  kind: LlmCacheKind;
  prompt: string;
  model: string;
  response: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  created_at: string;
}

/** The LLM answer cache and the request accounting (tables `llm_cache` and `llm_calls`, migration 0004). */
export class LlmCache {
  readonly #get;
  readonly #put;
  readonly #call;
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    this.#get = db.prepare<[string], RawEntry>('SELECT * FROM llm_cache WHERE key = ?');
    // The first answer stored under a key is kept: equal keys mean equal questions.
    this.#put = db.prepare(`
      INSERT INTO llm_cache (key, kind, prompt, model, response, prompt_tokens, completion_tokens, cost_usd, created_at)
      VALUES (@key, @kind, @prompt, @model, @response, @promptTokens, @completionTokens, @costUsd, @now)
      ON CONFLICT (key) DO NOTHING`);
    this.#call = db.prepare(`
      INSERT INTO llm_calls (run_id, item, prompt, model, purpose, outcome, http_status, prompt_tokens, completion_tokens,
                             cost_usd, duration_ms, cache_key, created_at)
      VALUES (@runId, @item, @prompt, @model, @purpose, @outcome, @httpStatus, @promptTokens, @completionTokens,
              @costUsd, @durationMs, @cacheKey, @now)`);
  }

  get(key: string): LlmCacheEntry | undefined {
    const r = this.#get.get(key);
    if (!r) return undefined;
    return {
      key: r.key,
      kind: r.kind,
      prompt: r.prompt,
      model: r.model,
      response: JSON.parse(r.response),
      promptTokens: r.prompt_tokens,
      completionTokens: r.completion_tokens,
      costUsd: r.cost_usd,
      createdAt: r.created_at,
    };
  }

  put(entry: Omit<LlmCacheEntry, 'createdAt'>): void {
    this.#put.run({
      key: entry.key,
      kind: entry.kind,
      prompt: entry.prompt,
      model: entry.model,
      response: JSON.stringify(entry.response),
      promptTokens: entry.promptTokens,
      completionTokens: entry.completionTokens,
      costUsd: entry.costUsd,
      now: nowIso(),
    });
  }

  recordCall(call: LlmCallRecord): void {
    this.#call.run({ ...call, now: nowIso() });
  }

  /** Requests, tokens and cost, for one run or all of them. */
  totals(runId?: number): LlmCallTotals {
    const where = runId === undefined ? '' : ' WHERE run_id = ?';
    const params = runId === undefined ? [] : [runId];
    const rows = this.#db
      .prepare<unknown[], { outcome: string; n: number; pt: number; ct: number; cost: number }>(
        `SELECT outcome, COUNT(*) AS n, SUM(prompt_tokens) AS pt, SUM(completion_tokens) AS ct, SUM(cost_usd) AS cost
         FROM llm_calls${where} GROUP BY outcome ORDER BY outcome`,
      )
      .all(...params);
    const outcomes: Record<string, number> = {};
    let requests = 0;
    let promptTokens = 0;
    let completionTokens = 0;
    let costUsd = 0;
    for (const r of rows) {
      outcomes[r.outcome] = r.n;
      requests += r.n;
      promptTokens += r.pt;
      completionTokens += r.ct;
      costUsd += r.cost;
    }
    return { requests, promptTokens, completionTokens, costUsd, outcomes };
  }

  /** Every recorded request, oldest first (for inspection and tests). */
  calls(filter: { readonly item?: string; readonly runId?: number } = {}): (LlmCallRecord & { id: number; createdAt: string })[] {
    const clauses: string[] = [];
    const params: unknown[] = [];
    if (filter.item !== undefined) {
      clauses.push('item = ?');
      params.push(filter.item);
    }
    if (filter.runId !== undefined) {
      clauses.push('run_id = ?');
      params.push(filter.runId);
    }
    const rows = this.#db
      .prepare<unknown[], Record<string, unknown>>(
        `SELECT * FROM llm_calls${clauses.length ? ` WHERE ${clauses.join(' AND ')}` : ''} ORDER BY id`,
      )
      .all(...params);
    return rows.map((r) => ({
      id: r.id as number,
      runId: r.run_id as number | null,
      item: r.item as string | null,
      prompt: r.prompt as string,
      model: r.model as string,
      purpose: r.purpose as LlmCallRecord['purpose'],
      outcome: r.outcome as string,
      httpStatus: r.http_status as number | null,
      promptTokens: r.prompt_tokens as number,
      completionTokens: r.completion_tokens as number,
      costUsd: r.cost_usd as number,
      durationMs: r.duration_ms as number,
      cacheKey: r.cache_key as string | null,
      createdAt: r.created_at as string,
    }));
  }
}
