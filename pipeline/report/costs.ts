import { z } from 'zod';
import { ReplayStore } from '../../cache/replays.js';
import type { Db } from '../../cache/store.js';
import { parsePrKey } from '../concepts/keys.js';
import { instanceId } from '../concepts/records/task-row.js';
import { monthCosts, type CandidateCostInput, type CommitCostInput, type MonthCosts } from '../concepts/task-costs.js';

/**
 * Reads what the cost of a month's tasks is computed from (pipeline/concepts/task-costs.ts has the
 * model): the ledger (which pull requests and commits belong to the month, which were emitted),
 * the LLM call log, the build attempts, validate's recorded times and the replays. Read-only; a
 * table an older schema lacks counts as empty.
 */

/** What classify hands on that costs need: the base commit. */
const classifyBaseSchema = z.object({ repo: z.string(), baseSha: z.string() });
/** validate's recorded machine time (absent from outputs recorded before issue 30). */
const validateTimeSchema = z.object({ durationMs: z.number().nonnegative().optional() });
const protocolTimeSchema = z.object({ measuredMs: z.number().nonnegative() });

function hasTable(db: Db, name: string): boolean {
  return db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?").get(name)!.n > 0;
}

function parsed<T>(schema: z.ZodType<T>, text: string | null): T | null {
  if (text === null) return null;
  try {
    const r = schema.safeParse(JSON.parse(text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

const monthOfInstant = (at: string | null): string | null => (at === null ? null : at.slice(0, 7));

/**
 * The replays' machine time per task (`owner/name#N` → each replay's ms): every replay the store
 * holds (`perfmine replay`, table `replays`: builds unless reused, the scan, the machine probe and
 * the measurement), those made here and those imported from task folders alike; none without it.
 */
export function replayDurations(db: Db): ReadonlyMap<string, readonly number[]> {
  return new ReplayStore(db).machineTimes();
}

/**
 * validate's machine time per candidate when its output does not record it (validations made
 * before issue 30): the harness's measurement (`protocol.measuredMs`) or the asv engine's
 * invocations; the expert build and the checks are then unknown and count 0.
 */
function recordedMeasurementMs(db: Db): Map<string, number> {
  const out = new Map<string, number>();
  if (!hasTable(db, 'validations')) return out;
  for (const r of db.prepare<[], { key: string; protocol: string | null }>('SELECT key, protocol FROM validations').all()) {
    const p = parsed(protocolTimeSchema, r.protocol);
    if (p) out.set(r.key, p.measuredMs);
  }
  if (hasTable(db, 'invocations'))
    for (const r of db.prepare<[], { key: string; ms: number }>('SELECT key, SUM(duration_ms) AS ms FROM invocations GROUP BY key').all())
      if (!out.has(r.key)) out.set(r.key, r.ms);
  return out;
}

/** Every pull request and base commit the store holds work for, with their figures. */
export function costInputs(db: Db): { candidates: CandidateCostInput[]; commits: CommitCostInput[] } {
  const items = (stage: string, withOutput: boolean) =>
    db
      .prepare<[string], { key: string; at: string | null; status: string; output: string | null }>(
        `SELECT key, at, status, ${withOutput ? 'output' : 'NULL AS output'} FROM stage_items WHERE stage = ?`,
      )
      .all(stage);

  // LLM requests by the item that sent them (a cache hit sends none and has no row)
  const llm = new Map<string, number>();
  if (hasTable(db, 'llm_calls'))
    for (const r of db
      .prepare<[], { item: string; usd: number }>('SELECT item, SUM(cost_usd) AS usd FROM llm_calls WHERE item IS NOT NULL GROUP BY item')
      .all())
      llm.set(r.item, r.usd);

  const prs = new Map<string, { month: string | null; commit: string | null; emitted: boolean; measureMs: number | null }>();
  const pr = (key: string, at: string | null) => {
    let p = prs.get(key);
    if (!p) prs.set(key, (p = { month: null, commit: null, emitted: false, measureMs: 0 }));
    p.month ??= monthOfInstant(at);
    return p;
  };
  for (const r of items('classify', true)) {
    const p = pr(r.key, r.at);
    const base = r.status === 'done' ? parsed(classifyBaseSchema, r.output) : null;
    if (base) p.commit = `${base.repo}@${base.baseSha}`;
  }
  const fallback = recordedMeasurementMs(db);
  for (const r of items('validate', true)) {
    const p = pr(r.key, r.at);
    if (r.output === null) continue; // failed before any output: nothing recorded of it
    p.measureMs = parsed(validateTimeSchema, r.output)?.durationMs ?? fallback.get(r.key) ?? null;
  }
  for (const r of items('emit', false)) {
    const p = pr(r.key, r.at);
    if (r.status === 'done') p.emitted = true;
  }
  const replays = replayDurations(db);
  const candidates: CandidateCostInput[] = [];
  for (const [key, p] of prs) {
    const parts = parsePrKey(key);
    if (p.month === null || parts === null) continue;
    candidates.push({
      key,
      month: p.month,
      commit: p.commit,
      instanceId: p.emitted ? instanceId(parts.repo, parts.number) : null,
      llmUsd: llm.get(key) ?? 0,
      measureMs: p.measureMs,
      replayMs: replays.get(key) ?? [],
    });
  }

  // base commits: every attempt, and the agent's requests (recorded under the commit's key; for
  // attempts made before the agent's requests named their commit, the cost each attempt recorded)
  const commits = new Map<string, { month: string | null; attempts: number; buildMs: number; attemptUsd: number }>();
  for (const r of items('synthesize', false)) commits.set(r.key, { month: monthOfInstant(r.at), attempts: 0, buildMs: 0, attemptUsd: 0 });
  if (hasTable(db, 'build_attempts'))
    for (const r of db
      .prepare<[], { repo: string; sha: string; n: number; ms: number; usd: number }>(
        'SELECT repo, sha, COUNT(*) AS n, SUM(duration_ms) AS ms, SUM(cost_usd) AS usd FROM build_attempts GROUP BY repo, sha',
      )
      .all()) {
      const key = `${r.repo}@${r.sha}`;
      const c = commits.get(key) ?? { month: null, attempts: 0, buildMs: 0, attemptUsd: 0 };
      commits.set(key, { ...c, attempts: r.n, buildMs: r.ms, attemptUsd: r.usd });
    }
  return {
    candidates,
    commits: [...commits.entries()].map(([key, c]) => ({
      key,
      month: c.month,
      attempts: c.attempts,
      buildMs: c.buildMs,
      llmUsd: llm.get(key) ?? c.attemptUsd,
    })),
  };
}

/** The month's costs (`YYYY-MM`) from the store. */
export function loadMonthCosts(db: Db, month: string): MonthCosts {
  const { candidates, commits } = costInputs(db);
  return monthCosts(month, candidates, commits);
}
