/**
 * Benchmark 4: git-source collect over a generated repository of 5,000 commits against plain
 * `git log --numstat` over the same range. The stage is timed in process (plan + every item,
 * diffs and asv configs read, records stored) and through the CLI (start-up included).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { runStage } from '../../pipeline/runner.js';
import { parseInstant, rangeWindow } from '../../pipeline/window.js';
import { collectStage } from '../../stages/collect/index.js';
import { buildLargeHistory } from '../fixtures/large-history.js';
import { harness, tempDir } from '../helpers/harness.js';
import { timed, timedCli } from './measure.js';

export interface GitCollectResult {
  readonly commits: number;
  readonly pullRequests: number;
  readonly gitLogMs: number;
  readonly stageMs: number;
  readonly cliMs: number;
  readonly ratio: number;
  readonly cliRatio: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function gitCollectBenchmark(options: { commits?: number; runs?: number } = {}): Promise<GitCollectResult> {
  const commits = options.commits ?? 5000;
  const runs = options.runs ?? 3;
  const dir = tempDir('perfmine-bench-git-');
  const { builder } = buildLargeHistory({ commits, start: '2024-01-01T00:00:00Z', end: '2026-01-01T00:00:00Z' });
  const repo = await builder.write(join(dir, 'repo'));
  const since = '2023-01-01';
  const until = '2027-01-01';

  const gitLog: number[] = [];
  for (let i = 0; i < runs; i++) {
    gitLog.push((await timed(() => execFileSync('git', ['-C', repo.path, 'log', '--numstat', `--since=${since}`, `--until=${until}`], { maxBuffer: 1 << 30 }))).ms);
  }
  const stage: number[] = [];
  let pullRequests = 0;
  for (let i = 0; i < runs; i++) {
    const { ctx, db } = harness({ db: join(dir, `stage-${i}.db`) });
    const scope = { window: rangeWindow(parseInstant(since)!, parseInstant(until)!), repos: ['bench/big'], prs: [], source: { kind: 'git' as const, path: repo.path } };
    const run = await timed(() => runStage(ctx, collectStage, scope));
    stage.push(run.ms);
    pullRequests = run.value.done;
    db.close();
  }
  const cli: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await timedCli(['--db', join(dir, `cli-${i}.db`), '--log-level', 'warn', 'stage', 'collect', '--source', `git:${repo.path}`, '--repo', 'bench/big', '--since', since, '--until', until]);
    if (r.code !== 0) throw new Error(`collect failed: ${r.stderr.slice(-1000)}`);
    cli.push(r.ms);
  }
  const g = median(gitLog);
  return { commits: repo.commitCount, pullRequests, gitLogMs: g, stageMs: median(stage), cliMs: median(cli), ratio: median(stage) / g, cliRatio: median(cli) / g };
}
