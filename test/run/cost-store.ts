import { Ledger } from '../../cache/ledger.js';
import type { Db } from '../../cache/store.js';

export const A = 'a'.repeat(40);
export const B = 'b'.repeat(40);
export const D = 'd'.repeat(40);
export const MIN = 60_000;

/**
 * A store with April's candidates #1 (emitted) and #2 (dropped by validate) on base commit A, #3
 * (emitted) on B, #4 (not performance work), May's #9 (emitted) also on A, and commit D that
 * classify no longer claims. #3's validation predates recorded durations: its harness's
 * `measuredMs` counts.
 */
export function seedCostStore(db: Db): void {
  const ledger = new Ledger(db);
  const repo = 'acme/fastlib';
  const at = (n: number) => (n === 9 ? '2025-05-03T00:00:00.000Z' : `2025-04-1${n}T00:00:00.000Z`);
  const complete = (stage: string, key: string, when: string | null, status: 'done' | 'dropped', output: unknown) =>
    ledger.complete(
      stage,
      1,
      { key, repo, at: when, inputHash: `${stage}-${key}` },
      { status, reason: status === 'dropped' ? 'x' : null, detail: null, output },
      null,
    );
  const base = { 1: A, 2: A, 3: B, 9: A } as Record<number, string>;
  for (const n of [1, 2, 3, 9]) complete('classify', `${repo}#${n}`, at(n), 'done', { repo, number: n, baseSha: base[n] });
  complete('classify', `${repo}#4`, at(4), 'dropped', { repo, number: 4 });
  complete('synthesize', `${repo}@${A}`, at(1), 'done', {});
  complete('synthesize', `${repo}@${B}`, at(3), 'done', {});
  complete('synthesize', `${repo}@${D}`, at(2), 'dropped', {});
  complete('validate', `${repo}#1`, at(1), 'done', { durationMs: 3 * MIN, expertBuildMs: MIN });
  complete('validate', `${repo}#2`, at(2), 'dropped', { durationMs: 1 * MIN, expertBuildMs: 0.5 * MIN });
  complete('validate', `${repo}#3`, at(3), 'done', {});
  complete('validate', `${repo}#9`, at(9), 'done', { durationMs: 2 * MIN, expertBuildMs: MIN });
  for (const n of [1, 3, 9]) complete('emit', `${repo}#${n}`, at(n), 'done', {});

  db.prepare(
    `INSERT INTO validations (key, repo, number, base_sha, merge_sha, base_image, decision, detail, pairs, calibration_pairs,
       machine_factors, calibration_factors, calibrated, paired_options, budget_exhausted, validated_at, engine, protocol)
     VALUES (?, ?, 3, ?, 'm', 'img', 'kept', '', 0, 0, '[]', '[]', 0, '{}', 0, 'now', 'perfmine', ?)`,
  ).run(`${repo}#3`, repo, B, JSON.stringify({ rounds: 6, measuredMs: 1.5 * MIN }));

  const attempt = db.prepare(
    `INSERT INTO build_attempts (repo, sha, commit_date, script, script_hash, source, outcome, duration_ms, cost_usd,
       base_image, toolchain_image, repo_image, clone_source, created_at)
     VALUES (?, ?, '2025-04-01T00:00:00Z', 's', 'h', ?, ?, ?, ?, 'b', 't', 'r', 'git:/x', 'now')`,
  );
  attempt.run(repo, A, 'agent', 'failed', 2 * MIN, 0.5); // the agent's requests are in llm_calls below: this figure is not used
  attempt.run(repo, A, 'agent', 'verified', 4 * MIN, 0.25);
  attempt.run(repo, B, 'neighbour', 'failed', 1 * MIN, 0);
  attempt.run(repo, B, 'agent', 'verified', 2 * MIN, 0.06); // no llm_calls name B (recorded before they did): 0.06 counts
  attempt.run(repo, D, 'template', 'failed', 0.5 * MIN, 0);

  const call = db.prepare(
    `INSERT INTO llm_calls (run_id, item, prompt, model, purpose, outcome, prompt_tokens, completion_tokens, cost_usd, duration_ms, created_at)
     VALUES (1, ?, ?, 'm', 'answer', 'ok', 10, 10, ?, 10, 'now')`,
  );
  call.run(`${repo}#1`, 'perf-intent', 0.01);
  call.run(`${repo}#1`, 'problem-extract', 0.02);
  call.run(`${repo}#2`, 'perf-intent', 0.01);
  call.run(`${repo}#4`, 'perf-intent', 0.01);
  call.run(`${repo}#9`, 'perf-intent', 0.03);
  call.run(`${repo}@${A}`, 'build-agent', 0.45);
  call.run(`${repo}@${A}`, 'build-agent', 0.15);
  call.run(null, 'build-agent', 9); // nobody's: not attributed
  call.run('zeta/other#1', 'perf-intent', 7); // no ledger row: no month
  // #3's classify answers came from the LLM cache: no request, no row, $0
}
