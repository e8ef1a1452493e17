/**
 * Benchmark 8: start-up of the compiled CLI. Each command runs `runs` times as a whole process
 * (after one warm-up run each), the commands in turn (A B C D E, A B C D E, ...) so that a change
 * in the machine's load falls on all of them alike; minimum and median wall time of each. The
 * target: `perfmine --help` and `perfmine status` within 2x of Node starting and opening the
 * SQLite file (`node -e 0` plus the time to open SQLite).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { openStore } from '../../cache/store.js';
import { BIN, cleanEnv, REPO_ROOT } from '../helpers/cli.js';
import { ensureBuilt } from '../helpers/build.js';
import { tempDir } from '../helpers/harness.js';

export interface StartupFigure {
  readonly name: string;
  readonly argv: readonly string[];
  readonly minMs: number;
  readonly medianMs: number;
}

export interface StartupResult {
  readonly runs: number;
  readonly figures: readonly StartupFigure[];
  /** Median of `node` opening the SQLite file: the baseline. */
  readonly baselineMs: number;
  /** Median of `perfmine --help` and of `perfmine status` over the baseline (target <= 2). */
  readonly helpRatio: number;
  readonly statusRatio: number;
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export function startupBenchmark(options: { runs?: number } = {}): StartupResult {
  ensureBuilt();
  const runs = options.runs ?? 15;
  const db = join(tempDir(), 'startup.db');
  openStore(db).close(); // a migrated, empty store: what `status` opens
  const sqlite = `import Database from 'better-sqlite3'; const db = new Database(${JSON.stringify(db)}, { readonly: true }); db.prepare('SELECT count(*) FROM sqlite_master').get(); db.close();`;
  const commands: { name: string; argv: string[] }[] = [
    { name: 'node -e 0', argv: ['-e', '0'] },
    { name: 'node opening the SQLite file (better-sqlite3)', argv: ['--input-type=module', '-e', sqlite] },
    { name: 'perfmine --help', argv: [BIN, '--help'] },
    { name: 'perfmine status', argv: [BIN, '--db', db, 'status'] },
    { name: 'perfmine --version', argv: [BIN, '--version'] },
  ];
  const times = commands.map(() => [] as number[]);
  const env = cleanEnv({ NODE_OPTIONS: '' });
  for (let round = -1; round < runs; round++) {
    commands.forEach((c, i) => {
      const started = performance.now();
      const r = spawnSync(process.execPath, c.argv, { cwd: REPO_ROOT, env, encoding: 'utf8' });
      const ms = performance.now() - started;
      if (r.status !== 0) throw new Error(`${c.name} failed (${r.status ?? r.signal}): ${r.stderr.slice(-2000)}`);
      if (round >= 0) times[i]!.push(ms);
    });
  }
  const figures = commands.map((c, i) => ({ name: c.name, argv: c.argv, minMs: Math.min(...times[i]!), medianMs: median(times[i]!) }));
  const baselineMs = figures[1]!.medianMs;
  return { runs, figures, baselineMs, helpRatio: figures[2]!.medianMs / baselineMs, statusRatio: figures[3]!.medianMs / baselineMs };
}
