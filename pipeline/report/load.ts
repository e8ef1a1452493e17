import { dirname, relative } from 'node:path';
import type { Db } from '../../cache/store.js';
import { Ledger } from '../../cache/ledger.js';
import { loadPullRequest } from '../../cache/pull-requests.js';
import { loadAccounts } from '../../cache/measurements.js';
import { classifyOutputSchema } from '../concepts/records/classify-output.js';
import { funnel as stageFunnel } from './funnel.js';
import { emittedTasks } from './tasks.js';
import type { GateOptions } from '../../tasks/publish/replay-gate.js';
import { loadMonthCosts } from './costs.js';
import { lastStop } from '../last-stop.js';
import type { Window } from '../window.js';
import { FUNNEL_COLUMNS, type FunnelColumn, type ReportData, type RepoFunnel, type StageCost } from './render.js';
import type { ReportAccount } from './render-account.js';

/** Which stage asked an LLM prompt (for cost per stage). */
const PROMPT_STAGE: Readonly<Record<string, string>> = { 'build-agent': 'synthesize' };

/** A pull request's way through the funnel, per repository, for the month. */
export function repoFunnel(ledger: Ledger, window: Window): RepoFunnel[] {
  const done = (stage: string) => ledger.list(stage, { window, includeTimeless: false, statuses: ['done'] });
  const byRepo = new Map<string, Record<FunnelColumn, number>>();
  const bump = (repo: string | null, column: FunnelColumn) => {
    if (!repo) return;
    let counts = byRepo.get(repo);
    if (!counts) byRepo.set(repo, (counts = Object.fromEntries(FUNNEL_COLUMNS.map((c) => [c, 0])) as Record<FunnelColumn, number>));
    counts[column] += 1;
  };
  for (const r of done('collect')) bump(r.repo, 'collected');
  for (const r of done('filter')) bump(r.repo, 'filtered');
  const built = new Set(done('synthesize').map((r) => r.key));
  for (const r of done('classify')) {
    bump(r.repo, 'classified');
    const out = classifyOutputSchema.safeParse(r.output);
    if (out.success && built.has(`${out.data.repo}@${out.data.baseSha}`)) bump(r.repo, 'built');
  }
  for (const r of done('validate')) bump(r.repo, 'validated');
  for (const r of done('emit')) bump(r.repo, 'emitted');
  return [...byRepo.entries()].map(([repo, counts]) => ({ repo, counts }));
}

/** Time per stage from the month's recorded runs; LLM requests, tokens and cost from the call log. */
export function stageCosts(db: Db, ledger: Ledger, window: Window): StageCost[] {
  const costs = new Map<string, { durationMs: number; llmRequests: number; llmTokens: number; llmCostUsd: number }>();
  const entry = (stage: string) => {
    let c = costs.get(stage);
    if (!c) costs.set(stage, (c = { durationMs: 0, llmRequests: 0, llmTokens: 0, llmCostUsd: 0 }));
    return c;
  };
  const runs = db
    .prepare<[string], { summary: string | null }>('SELECT summary FROM runs WHERE window_label = ? AND summary IS NOT NULL')
    .all(window.label);
  for (const run of runs) {
    let summary: { stages?: { stage: string; durationMs: number }[] };
    try {
      summary = JSON.parse(run.summary!) as typeof summary;
    } catch {
      continue;
    }
    for (const s of summary.stages ?? []) entry(s.stage).durationMs += s.durationMs;
  }
  const items = new Set(
    [...ledger.list('classify', { window, includeTimeless: false }), ...ledger.list('synthesize', { window, includeTimeless: false })].map(
      (r) => r.key,
    ),
  );
  const calls = db
    .prepare<[], { item: string | null; prompt: string; requests: number; tokens: number; cost: number }>(
      `SELECT item, prompt, COUNT(*) AS requests, SUM(prompt_tokens + completion_tokens) AS tokens, SUM(cost_usd) AS cost
       FROM llm_calls GROUP BY item, prompt`,
    )
    .all();
  for (const c of calls) {
    if (c.item === null || !items.has(c.item)) continue;
    const e = entry(PROMPT_STAGE[c.prompt] ?? 'classify');
    e.llmRequests += c.requests;
    e.llmTokens += c.tokens;
    e.llmCostUsd += c.cost;
  }
  const order = ['discover', 'collect', 'filter', 'classify', 'synthesize', 'validate', 'emit'];
  return [...costs.entries()].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b)).map(([stage, c]) => ({ stage, ...c }));
}

/** The month's validated candidates with a recorded account of their measurement, in the ledger's order. */
export function measurementTime(ledger: Ledger, db: Db, window: Window): ReportAccount[] {
  const rows = ledger.list('validate', { window, includeTimeless: false }).filter((r) => r.status === 'done' || r.status === 'dropped');
  if (rows.length === 0) return [];
  const accounts = loadAccounts(
    db,
    rows.map((r) => r.key),
  );
  return rows.flatMap((r) => {
    const account = accounts.get(r.key);
    return account ? [{ key: r.key, decision: r.status === 'done' ? 'kept' : (r.reason ?? 'dropped'), account }] : [];
  });
}

/** Everything the month's report shows, read from the store and the emitted tasks. */
export function loadReportData(
  db: Db,
  window: Window,
  options: { out: string; reportPath: string; now?: Date; gate?: GateOptions },
): ReportData {
  const ledger = new Ledger(db);
  const tasks = emittedTasks(db, window, options.out, options.gate).map((t) => {
    const pr = loadPullRequest(db, t.repo, t.pull_number);
    const folder = relative(dirname(options.reportPath), t.folder) || '.';
    return {
      instanceId: t.instance_id,
      repo: t.repo,
      pullNumber: t.pull_number,
      title: pr?.title ?? `${t.repo}#${t.pull_number}`,
      speedup: t.expert_speedup.all,
      improvedSpeedup: t.expert_speedup.improved,
      workloads: t.workloads,
      improvedWorkloads: t.improved,
      category: t.category,
      difficulty: t.difficulty,
      folder: `${folder}/`,
      replays: {
        count: t.replays.count,
        replicates: t.replays.by_verdict.replicates,
        doesNotReplicate: t.replays.by_verdict['does-not-replicate'],
        inconclusive: t.replays.by_verdict.inconclusive,
        failed: t.replays.by_verdict.failed,
        machines: t.replays.machines,
        workloads: t.replays.workloads,
        published: t.replays.published,
        gateReason: t.replays.gate_reason,
        gateDetail: t.replays.gate_detail,
      },
    };
  });
  const stages = stageFunnel(ledger.counts({ window })).map((s) => ({
    stage: s.stage,
    done: s.done,
    dropped: s.droppedBy,
    failed: s.failedBy,
    pending: s.pending,
    waiting: s.waiting,
  }));
  const stop = lastStop(db, window.label);
  return {
    month: window.label,
    generatedAt: (options.now ?? new Date()).toISOString(),
    funnel: repoFunnel(ledger, window),
    stages,
    costs: stageCosts(db, ledger, window),
    taskCosts: loadMonthCosts(db, window.label),
    tasks,
    stop: stop && { runId: stop.runId, stage: stop.stage, reason: stop.reason, issues: stop.issues, fix: stop.fix },
    measurementTime: measurementTime(ledger, db, window),
  };
}
