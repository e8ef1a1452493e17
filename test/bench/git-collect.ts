/**
 * Benchmark 4: git-source collect against `git log --first-parent --numstat` over the same window
 * (git's own walk of the same first-parent history with a diff of every commit: what collect
 * cannot do with less). Over a generated repository of 5,000 commits in two years:
 *
 * - the whole history: the stage in process (plan + every item, diffs and asv configs read,
 *   records stored in a file store), through the CLI, the CLI's start-up alone (`perfmine
 *   --help`), and the same command over a window with no commit on a fresh store (what a stage
 *   run pays before its first item: loading the stage, config and logger, creating the store,
 *   the clone's facts), so that what start-up costs can be told from what the stage costs;
 * - the floor (`git-collect-floor.mjs`, run by bare `node`): the least a Node program can do to
 *   store the same pull requests with their diffs in SQLite (one `git log -p`, a record parsed,
 *   hashed and inserted per PR), without the ledger, the branches' dates, the asv configs or the
 *   CLI: how much of the ratio any design that stores the diffs pays on this machine;
 * - one month of it: the stage in process, and how much of the history it read.
 *
 * Each round runs git, the stage, the CLI and the start-up in turn, and a ratio is taken within a
 * round, so that the machine's drift falls on both sides; medians over the rounds are quoted.
 */
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runStage } from '../../pipeline/runner.js';
import { monthWindow, parseInstant, rangeWindow, type Window } from '../../pipeline/window.js';
import { collectStage } from '../../stages/collect/index.js';
import { buildLargeHistory } from '../fixtures/large-history.js';
import { harness, tempDir } from '../helpers/harness.js';
import { timed, timedCli, timedNode } from './measure.js';

export interface GitCollectResult {
  readonly commits: number;
  readonly pullRequests: number;
  readonly rounds: number;
  /** `git log --first-parent --numstat` over the whole history (the reference), and `git log --numstat` (every commit). */
  readonly gitLogMs: number;
  readonly gitLogAllMs: number;
  readonly stageMs: number;
  readonly cliMs: number;
  /** `perfmine --help` through the same executable: loading the program, no work. */
  readonly startupMs: number;
  /** The same `stage collect` over a window without commits, on a fresh store: a stage run's fixed cost. */
  readonly stageStartupMs: number;
  /** Medians of the per-round ratios to `gitLogMs`. */
  readonly ratio: number;
  readonly cliRatio: number;
  /** The CLI less its start-up (`--help`), to the reference: what the CLI costs once start-up is cheap. */
  readonly cliLessStartupRatio: number;
  /** The CLI less the stage run's fixed cost (`stageStartupMs`), to the reference: what the 2,433 records cost. */
  readonly cliLessStageStartupRatio: number;
  /** The floor program (`git-collect-floor.mjs`) over the same range, and the median of its per-round ratios to `gitLogMs`. */
  readonly floorMs: number;
  readonly floorRatio: number;
  readonly month: {
    readonly window: string;
    readonly pullRequests: number;
    /** Commits of the history the plan read (its log line), and the whole history's. */
    readonly commitsRead: number | null;
    readonly commitsTotal: number;
    readonly gitLogMs: number;
    readonly stageMs: number;
    readonly ratio: number;
  };
}

const FLOOR = join(dirname(fileURLToPath(import.meta.url)), 'git-collect-floor.mjs');

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function gitLog(path: string, window: Window, firstParent: boolean): Promise<{ ms: number }> {
  const args = ['-C', path, 'log', ...(firstParent ? ['--first-parent'] : []), '--numstat', `--since=${window.start}`, `--until=${window.end}`, 'main'];
  return timed(() => execFileSync('git', args, { maxBuffer: 1 << 30 }));
}

/** The stage in process over a file store; how many commits its plan says it read. */
async function stageRun(dir: string, name: string, path: string, window: Window): Promise<{ ms: number; done: number; read: number | null }> {
  const { ctx, db, lines } = harness({ db: join(dir, `${name}.db`) });
  const scope = { window, repos: ['bench/big'], prs: [], source: { kind: 'git' as const, path } };
  const run = await timed(() => runStage(ctx, collectStage, scope));
  db.close();
  const read = lines
    .map((l) => JSON.parse(l) as { msg?: string; mainline?: number; sideCommits?: number; commits?: number })
    .find((l) => l.msg?.startsWith('read the'));
  const commitsRead = read ? (read.mainline !== undefined ? read.mainline + (read.sideCommits ?? 0) : (read.commits ?? null)) : null;
  return { ms: run.ms, done: run.value.done, read: commitsRead };
}

export async function gitCollectBenchmark(options: { commits?: number; rounds?: number; month?: string } = {}): Promise<GitCollectResult> {
  const commits = options.commits ?? 5000;
  const rounds = options.rounds ?? 5;
  const month = options.month ?? '2025-03';
  const dir = tempDir('perfmine-bench-git-');
  const { builder } = buildLargeHistory({ commits, start: '2024-01-01T00:00:00Z', end: '2026-01-01T00:00:00Z' });
  const repo = await builder.write(join(dir, 'repo'));
  const since = '2023-01-01';
  const until = '2027-01-01';
  const whole = rangeWindow(parseInstant(since)!, parseInstant(until)!);

  // one record of wall times per round; every ratio is taken within its round
  const r: { git: number; gitAll: number; stage: number; cli: number; startup: number; empty: number; floor: number }[] = [];
  const collectArgs = (db: string, from: string, to: string) => ['--db', db, '--log-level', 'warn', 'stage', 'collect', '--source', `git:${repo.path}`, '--repo', 'bench/big', '--since', from, '--until', to];
  let pullRequests = 0;
  for (let i = 0; i < rounds; i++) {
    const g = (await gitLog(repo.path, whole, true)).ms;
    const stage = await stageRun(dir, `stage-${i}`, repo.path, whole);
    pullRequests = stage.done;
    const cli = await timedCli(collectArgs(join(dir, `cli-${i}.db`), since, until));
    if (cli.code !== 0) throw new Error(`collect failed: ${cli.stderr.slice(-1000)}`);
    const startup = await timedCli(['--help']);
    // a month after the history's last commit: nothing to read but the clone's facts and one commit
    const empty = await timedCli(collectArgs(join(dir, `empty-${i}.db`), '2030-01-01', '2030-02-01'));
    if (empty.code !== 0) throw new Error(`collect over an empty window failed: ${empty.stderr.slice(-1000)}`);
    const floor = await timedNode(FLOOR, [join(dir, `floor-${i}.db`), repo.path, since, until, 'main']);
    const floorRecords = floor.code === 0 ? (JSON.parse(floor.stdout) as { records: number }).records : null;
    if (floorRecords !== pullRequests) throw new Error(`the floor stored ${floorRecords ?? 'nothing'} records, the stage ${pullRequests}: ${floor.stderr.slice(-1000)}`);
    const gitAll = (await gitLog(repo.path, whole, false)).ms;
    r.push({ git: g, gitAll, stage: stage.ms, cli: cli.ms, startup: startup.ms, empty: empty.ms, floor: floor.ms });
  }

  const window = monthWindow(month);
  const m = { git: [] as number[], stage: [] as number[], ratio: [] as number[] };
  let monthPulls = 0;
  let commitsRead: number | null = null;
  for (let i = 0; i < rounds; i++) {
    const g = (await gitLog(repo.path, window, true)).ms;
    const stage = await stageRun(dir, `month-${i}`, repo.path, window);
    monthPulls = stage.done;
    commitsRead = stage.read;
    m.git.push(g);
    m.stage.push(stage.ms);
    m.ratio.push(stage.ms / g);
  }

  return {
    commits: repo.commitCount,
    pullRequests,
    rounds,
    gitLogMs: median(r.map((x) => x.git)),
    gitLogAllMs: median(r.map((x) => x.gitAll)),
    stageMs: median(r.map((x) => x.stage)),
    cliMs: median(r.map((x) => x.cli)),
    startupMs: median(r.map((x) => x.startup)),
    stageStartupMs: median(r.map((x) => x.empty)),
    ratio: median(r.map((x) => x.stage / x.git)),
    cliRatio: median(r.map((x) => x.cli / x.git)),
    cliLessStartupRatio: median(r.map((x) => (x.cli - x.startup) / x.git)),
    cliLessStageStartupRatio: median(r.map((x) => (x.cli - x.empty) / x.git)),
    floorMs: median(r.map((x) => x.floor)),
    floorRatio: median(r.map((x) => x.floor / x.git)),
    month: { window: month, pullRequests: monthPulls, commitsRead, commitsTotal: repo.commitCount, gitLogMs: median(m.git), stageMs: median(m.stage), ratio: median(m.ratio) },
  };
}
