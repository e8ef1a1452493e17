/**
 * Benchmarks 1 and 2: collect + filter over 30,000 synthetic pull requests (100 repositories ×
 * 300) served by the loopback GitHub server, then the same window again; then the rule filter
 * alone over the 30,000 stored pull requests (`--force`: every item decided and written again), in
 * process and through the CLI, in turn for a few rounds.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openStore } from '../../cache/store.js';
import { runStage } from '../../pipeline/runner.js';
import { monthWindow } from '../../pipeline/window.js';
import { filterStage } from '../../stages/filter/index.js';
import { syntheticRepos } from '../fakes/github-data.js';
import { FakeGitHub } from '../fakes/github-server.js';
import { loadConfig } from '../../pipeline/config/load.js';
import { createContext } from '../../pipeline/context.js';
import { readCredentials } from '../../pipeline/credentials.js';
import { createLogger } from '../../pipeline/logging.js';
import { tempDir } from '../helpers/harness.js';
import { timed, timedCli } from './measure.js';

export interface CollectFilterResult {
  readonly pullRequests: number;
  readonly first: { readonly ms: number; readonly collectMs: number; readonly filterMs: number; readonly requests: number; readonly peakMiB: number };
  readonly second: { readonly ms: number; readonly requests: number; readonly conditional: number; readonly notModified: number; readonly rowsWritten: number; readonly ratio: number };
  /**
   * In process (the stage itself), and as `perfmine stage filter --force` (the compiled CLI, with Node's
   * start; `startupMs`: `perfmine --help`, the start alone); medians of `rounds` rounds, each
   * running both in turn.
   */
  readonly filterOnly: { readonly ms: number; readonly items: number; readonly cliMs: number; readonly startupMs: number; readonly rounds: number };
}

/** Rows of every table except runs (`SELECT *`), as one text per table: equal text, nothing written. */
function snapshot(path: string): Map<string, string> {
  const db = new Database(path, { readonly: true });
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('runs', 'sqlite_sequence')").all() as { name: string }[]).map((t) => t.name);
  const out = new Map<string, string>();
  for (const t of tables) out.set(t, JSON.stringify(db.prepare(`SELECT * FROM "${t}"`).raw().all()));
  db.close();
  return out;
}

function changedRows(a: Map<string, string>, b: Map<string, string>): number {
  let changed = 0;
  for (const [table, rowsA] of a) {
    const before = JSON.parse(rowsA) as unknown[][];
    const after = JSON.parse(b.get(table) ?? '[]') as unknown[][];
    const seen = new Set(before.map((r) => JSON.stringify(r)));
    changed += after.filter((r) => !seen.has(JSON.stringify(r))).length + Math.max(0, before.length - after.length);
  }
  return changed;
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function collectFilterBenchmark(options: { repos?: number; pulls?: number; dir?: string; rounds?: number } = {}): Promise<CollectFilterResult> {
  const repos = syntheticRepos(options.repos ?? 100, { pulls: options.pulls ?? 300, mergedFrom: '2025-04-01T00:00:00Z', mergedTo: '2025-05-01T00:00:00Z', issueEvery: 10 });
  // 30,000 pull requests take ~190,000 requests: one token with an Enterprise-sized budget.
  const gh = await FakeGitHub.start({ repos, limits: { core: 1_000_000 } });
  const dir = options.dir ?? tempDir('perfmine-bench-');
  const db = join(dir, 'bench.db');
  const config = join(dir, 'perfmine.config.json');
  writeFileSync(config, JSON.stringify({ repos: repos.map((r) => r.fullName), github: { baseUrl: gh.url, concurrency: 8 }, llm: { mode: 'none' } }));
  const env = { GITHUB_TOKEN: 'ghp_benchtoken_0000000000000000', PERFMINE_LOG_LEVEL: 'warn' };
  const stage = (name: string) => timedCli(['--config', config, '--db', db, 'stage', name, '--month', '2025-04'], env, dir);
  try {
    const collect1 = await stage('collect');
    if (collect1.code !== 0) throw new Error(`collect failed (${collect1.code}): ${collect1.stderr.slice(-2000)}`);
    const filter1 = await stage('filter');
    if (filter1.code !== 0) throw new Error(`filter failed (${filter1.code}): ${filter1.stderr.slice(-2000)}`);
    const firstRequests = gh.requests().length;
    const before = snapshot(db);

    const collect2 = await stage('collect');
    const filter2 = await stage('filter');
    const second = gh.requests().slice(firstRequests);
    const after = snapshot(db);
    const pullRequests = (new Database(db, { readonly: true }).prepare('SELECT COUNT(*) AS n FROM pull_requests').get() as { n: number }).n;

    // The rule filter alone, in process, over the stored pull requests (--force: every item decided
    // again and written again), logging at the CLI's default level as a real run does.
    const store = openStore(db);
    const { config: filterConfig } = loadConfig({ env: {}, flags: { llm: { mode: 'none' } }, cwd: dir });
    const ctx = createContext({ config: filterConfig, credentials: readCredentials({}), db: store, log: createLogger({ level: 'info', format: 'json', destination: { write: () => {} } }) });
    const rounds = options.rounds ?? 3;
    const inProcess: number[] = [];
    const cli: number[] = [];
    const startup: number[] = [];
    let items = 0;
    for (let i = 0; i < rounds; i++) {
      const run = await timed(() => runStage(ctx, filterStage, { window: monthWindow('2025-04'), repos: [], prs: [], source: { kind: 'github' } }, { force: true }));
      inProcess.push(run.ms);
      items = run.value.ran;
      const filterCli = await timedCli(['--config', config, '--db', db, 'stage', 'filter', '--month', '2025-04', '--force'], env, dir);
      if (filterCli.code !== 0) throw new Error(`filter failed (${filterCli.code}): ${filterCli.stderr.slice(-2000)}`);
      cli.push(filterCli.ms);
      startup.push((await timedCli(['--help'], env, dir)).ms);
    }
    store.close();

    const firstMs = collect1.ms + filter1.ms;
    const secondMs = collect2.ms + filter2.ms;
    return {
      pullRequests,
      first: { ms: firstMs, collectMs: collect1.ms, filterMs: filter1.ms, requests: firstRequests, peakMiB: Math.max(collect1.peakMiB, filter1.peakMiB) },
      second: {
        ms: secondMs,
        requests: second.length,
        conditional: second.filter((r) => r.conditional).length,
        notModified: second.filter((r) => r.status === 304).length,
        rowsWritten: changedRows(before, after),
        ratio: secondMs / firstMs,
      },
      filterOnly: { ms: median(inProcess), items, cliMs: median(cli), startupMs: median(startup), rounds },
    };
  } finally {
    await gh.close();
  }
}
