import { join } from 'node:path';
import { openStore } from '../../cache/store.js';
import { createContext } from '../../pipeline/context.js';
import { runStage } from '../../pipeline/runner.js';
import { monthWindow } from '../../pipeline/window.js';
import { memoryLogger } from '../helpers/context.js';
import { tempDir } from '../helpers/harness.js';
import { preparedStage, slurmConfig, slurmUnavailable } from '../executor/fixtures/prepared-stage.js';

export interface SlurmCoordinatorResult {
  readonly items: number;
  /** executor.slurm.arraySize: tasks per job array (1: one sbatch per item). */
  readonly arraySize: number;
  readonly done: number;
  readonly wallMs: number;
  readonly submitMs: number;
  readonly submitWallMs: number;
  readonly submissionsPerSecond: number;
  readonly pollMs: number;
  readonly ingestMs: number;
  readonly idleMs: number;
  /** Wall time the coordinator itself was busy (submitting, polling, reading results, ingesting) per item. */
  readonly overheadMsPerItem: number;
  /** CPU time of the coordinator's own process per item (sbatch/squeue/sacct processes not included). */
  readonly cpuMsPerItem: number;
}

/**
 * The coordinator alone on the real cluster (scripts/setup-slurm.sh): `items` jobs whose command
 * writes a prepared result at once (a shell line, not perfmine's worker: the worker's start-up is
 * the node's cost, not the coordinator's), all submitted, tracked and ingested through the stage
 * runner; in job arrays of `arraySize` tasks (1: one sbatch per item).
 */
export async function slurmCoordinatorBenchmark(items = 1000, arraySize = 100): Promise<SlurmCoordinatorResult> {
  const why = slurmUnavailable();
  if (why) throw new Error(why);
  const dir = tempDir('perfmine-bench-slurm-');
  const db = openStore(join(dir, 'perfmine.db'));
  const { log, lines } = memoryLogger();
  // `--spool DIR --job NAME` follow: $2 and $4. The result is written whole (temporary file, then mv).
  const writeResult = 'd="$2/jobs/$4"; printf \'{"version":1,"jobName":"%s","ok":true,"output":{"n":0}}\' "$4" > "$d/result.json.tmp" && mv "$d/result.json.tmp" "$d/result.json"';
  const config = slurmConfig(join(dir, 'spool'), { workerCommand: ['/bin/sh', '-c', writeResult, 'perfmine-prepared'], maxJobs: items, pollIntervalMs: 1000, arraySize });
  const ctx = createContext({ config, credentials: { githubTokens: [], openaiApiKey: undefined, googleApplicationCredentials: undefined, bigqueryProject: undefined }, db, log });
  const stage = preparedStage(Array.from({ length: items }, (_, i) => ({ key: `bench-${i}`, payload: { output: { n: 0 } } })));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const report = await runStage(ctx, stage, { window: monthWindow('2025-04'), repos: [], prs: [], source: { kind: 'github' } });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  db.close();
  const line = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['msg'] === 'slurm executor: stage finished');
  if (!line) throw new Error('the executor did not report');
  const n = (k: string) => Number(line[k]);
  return {
    items,
    arraySize,
    done: report.done,
    wallMs,
    submitMs: n('submitMs'),
    submissionsPerSecond: n('submitted') / (n('submitWallMs') / 1000),
    submitWallMs: n('submitWallMs'),
    pollMs: n('pollMs'),
    ingestMs: n('ingestMs'),
    idleMs: n('idleMs'),
    overheadMsPerItem: (wallMs - n('idleMs')) / items,
    cpuMsPerItem: (cpu.user + cpu.system) / 1000 / items,
  };
}
