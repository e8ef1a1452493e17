import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHistoryBuilder, type GitHistory } from '../fixtures/git-history.js';
import { tempDir } from '../helpers/harness.js';
import { startGitGate, type GitGate } from './git-gate.js';
import { count, doneKeys, killPoint, LEDGER, runToEnd, snapshot, startCli, type RunningCli, type TableSpec } from './kill.js';

// Kill points: git processes of the plan, the two that read the commits, and the asv config reads.
const SEEDS = [7, 30, 36];
const TABLES: readonly TableSpec[] = [LEDGER, { table: 'pull_requests' }, { table: 'asv_configs', omit: ['checked_at'] }];

async function history(): Promise<GitHistory> {
  const h = new GitHistoryBuilder();
  h.commit({
    message: 'Initial',
    date: '2025-03-01T00:00:00Z',
    files: {
      'asv.conf.json': '{\n  // benchmarks\n  "version": 1,\n  "benchmark_dir": "benchmarks",\n}\n',
      'fastlib/__init__.py': '',
      'fastlib/core.py': 'def total(xs):\n    return sum(xs)\n',
    },
  });
  for (let i = 0; i < 12; i++) {
    const day = String(2 + 2 * i).padStart(2, '0');
    const files = {
      [`fastlib/mod_${i}.py`]: `def f_${i}(x):\n    return x * ${i}\n`,
      'fastlib/core.py': `def total(xs):\n    return sum(xs)  # revision ${i}\n`,
    };
    if (i % 3 === 0) {
      h.merge({
        number: 100 + i,
        from: `dev/speedup-${i}`,
        title: `Speed up part ${i}`,
        commits: [{ message: `wip ${i}`, files, date: `2025-04-${day}T08:00:00Z` }],
        date: `2025-04-${day}T12:00:00Z`,
      });
    } else {
      h.squash({ number: 100 + i, title: `PERF: faster part ${i}`, files, date: `2025-04-${day}T10:00:00Z` });
    }
  }
  return h.write();
}

/**
 * SIGKILL of `perfmine stage collect --source git:PATH` at a seeded git process: every git process
 * the CLI starts passes a gate in this process; the k-th is held and the CLI's process group is
 * killed while it waits. The rerun must end with the rows of an uninterrupted run.
 */
describe('SIGKILL during collect from a local clone', () => {
  let repo: GitHistory;
  let gate: GitGate;
  let dir: string;
  let configFile: string;
  let referenceDb: string;
  let referenceArrivals = 0;
  const env = { PERFMINE_LOG_FORMAT: 'json', PERFMINE_LOG_LEVEL: 'warn' };
  const args = (db: string) => [
    '--db',
    db,
    '--config',
    configFile,
    'stage',
    'collect',
    '--source',
    `git:${repo.path}`,
    '--month',
    '2025-04',
    '--json',
  ];

  beforeAll(async () => {
    dir = tempDir('perfmine-kill-git-');
    repo = await history();
    gate = await startGitGate();
    configFile = join(dir, 'perfmine.config.json');
    // At most two commits read ahead of their items: the two `git log`s that read them (every
    // other commit each) wait in between.
    writeFileSync(configFile, JSON.stringify({ collect: { gitBatchSize: 2, gitStreams: 2 } }));
    referenceDb = join(dir, 'reference.db');
    const reference = await runToEnd(args(referenceDb), { env: { ...env, ...gate.env } });
    expect(reference.code, reference.stderr).toBe(0);
    expect(JSON.parse(reference.stdout).stages[0]).toMatchObject({ done: 12, failed: {} });
    referenceArrivals = gate.arrivals;
    expect(gate.log.filter((a) => a.includes('--no-walk=unsorted')).length).toBe(2);
  }, 120_000);

  afterAll(async () => {
    await gate?.close();
    await repo?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const seed of SEEDS) {
    it(`seed ${seed}: the rerun after the kill gives the rows of an uninterrupted run`, async () => {
      const k = killPoint(seed, referenceArrivals);
      const db = join(dir, `crashed-${seed}.db`);
      gate.reset();
      // Armed before the CLI starts (it is assigned synchronously, before any git process can ask).
      let cli: RunningCli | undefined;
      gate.decide((n) => {
        if (n !== k) return 'run';
        cli!.kill();
        return 'hold';
      });
      cli = startCli(args(db), { env: { ...env, ...gate.env } });
      const killed = await cli.done;
      gate.decide(null);
      expect(killed.signal).toBe('SIGKILL');
      // The k-th git process was held when the kill was sent; git processes start up to `cores` at a
      // time, so another may have reached the gate before the kill landed (run 6 of ten saw 2 for k = 1).
      expect(gate.arrivals).toBeGreaterThanOrEqual(k);
      expect(count(db, "SELECT COUNT(*) AS n FROM runs WHERE status = 'running'")).toBe(1);
      const doneBefore = doneKeys(db, 'collect');

      const rerun = await runToEnd(args(db), { env: { ...env, ...gate.env } });
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(JSON.parse(rerun.stdout).stages[0]).toMatchObject({
        planned: 12,
        reused: doneBefore.length,
        ran: 12 - doneBefore.length,
        done: 12,
        failed: {},
      });
      expect(snapshot(db, TABLES)).toEqual(snapshot(referenceDb, TABLES));
      expect(count(db, "SELECT COUNT(*) AS n FROM runs WHERE status = 'crashed'")).toBe(1);
    }, 120_000);
  }
});
