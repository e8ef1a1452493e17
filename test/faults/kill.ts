/**
 * Helpers for crash tests: a seeded choice of the kill point, the real CLI started in a process
 * group of its own (so that a SIGKILL takes its git and other helper processes with it), and a
 * comparable dump of database tables.
 *
 * A kill test runs a command once to the end (the reference), then again on a fresh database and
 * kills it when a chosen event happens (the k-th request a loopback server receives, the k-th git
 * process, ...; the event holds the child where it is, so the kill point does not depend on
 * timing), then runs it again to the end and compares the tables with the reference.
 *
 *   const k = killPoint(seed, referenceRequests);
 *   let cli: RunningCli | undefined;                 // armed before the child starts
 *   server.onRequest((r) => (r.index === k ? (cli!.kill(), { kind: 'hang' }) : null));
 *   cli = startCli(['stage', 'collect', ...], { env });
 *   expect((await cli.done).signal).toBe('SIGKILL');
 *
 * Synthesize, validate and emit kills reuse the same pieces: run the CLI through
 * fixtures/labelled-cli.ts (`script`), so that its containers and images carry the test's label;
 * hold a step at a seeded point (the k-th container it creates, through the same kind of gate as
 * git-gate.ts, or the k-th LLM request of the build agent), kill, rerun, compare `snapshot` of
 * their tables (build_attempts without ids and durations; validations, invocations and
 * workload_verdicts without times), and check that no container of the label is left running.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { BIN, cleanEnv, collect, REPO_ROOT, type CliResult } from '../helpers/cli.js';
import { mulberry32 } from '../helpers/prng.js';

/** The event (1-based) at which a run is killed, chosen by the seed among `total` events. */
export function killPoint(seed: number, total: number): number {
  if (!Number.isInteger(total) || total < 1) throw new RangeError(`killPoint: no events to choose from (${total})`);
  return 1 + Math.floor(mulberry32(seed)() * total);
}

export interface RunningCli {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves when the process has exited and its streams are closed. */
  readonly done: Promise<CliResult>;
  /** SIGKILL to the whole process group (the CLI and every process it started). */
  kill(): void;
}

/**
 * Starts the real `perfmine` executable (or another entry script) in a new process group, with
 * a clean environment plus `env`. Only this group is ever killed.
 */
export function startCli(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; script?: string } = {},
): RunningCli {
  const script = options.script ?? BIN;
  // tsx resolved from this repository, so that a child may run in any directory.
  const loader = script.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : [];
  const child = spawn(process.execPath, [...loader, script, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: cleanEnv(options.env),
    detached: true,
  }) as ChildProcessWithoutNullStreams;
  const done = collect(child, '');
  const pid = child.pid;
  return {
    child,
    done,
    kill() {
      if (pid === undefined) return;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    },
  };
}

/** Runs the CLI to the end (in its own process group, as startCli). */
export function runToEnd(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; script?: string } = {},
): Promise<CliResult> {
  return startCli(args, options).done;
}

/** Copies a closed SQLite database (with its WAL, if one was left). */
export function copyDb(from: string, to: string): void {
  copyFileSync(from, to);
  for (const suffix of ['-wal', '-shm']) if (existsSync(from + suffix)) copyFileSync(from + suffix, to + suffix);
}

export interface TableSpec {
  readonly table: string;
  /** Columns that legitimately differ between runs (timestamps, attempts, run ids, durations). */
  readonly omit?: readonly string[];
  /** SQL condition restricting the rows compared. */
  readonly where?: string;
}

/** The stage ledger, without what a rerun changes by design. */
export const LEDGER: TableSpec = { table: 'stage_items', omit: ['attempts', 'run_id', 'updated_at'] };

/**
 * Rows of each table without the omitted columns, as a sorted list (bytes as hex), so that two
 * databases made by different sequences of runs can be compared with toEqual.
 */
export function snapshot(dbPath: string, specs: readonly TableSpec[]): Record<string, string[]> {
  const db = new Database(dbPath, { readonly: true });
  try {
    const out: Record<string, string[]> = {};
    for (const spec of specs) {
      const rows = db.prepare(`SELECT * FROM ${spec.table}${spec.where ? ` WHERE ${spec.where}` : ''}`).all() as Record<string, unknown>[];
      const omit = new Set(spec.omit ?? []);
      const key = spec.where ? `${spec.table} WHERE ${spec.where}` : spec.table;
      out[key] = rows
        .map((row) =>
          JSON.stringify(
            Object.fromEntries(
              Object.entries(row)
                .filter(([k]) => !omit.has(k))
                .map(([k, v]) => [k, Buffer.isBuffer(v) ? `hex:${v.toString('hex')}` : v]),
            ),
          ),
        )
        .sort();
    }
    return out;
  } finally {
    db.close();
  }
}

/** Every row of every table (for secret hunts): `table: JSON` lines, bytes as latin1 text and hex. */
export function dumpEverything(dbPath: string): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
    const lines: string[] = [];
    for (const table of tables) {
      for (const row of db.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[]) {
        const values = Object.entries(row).map(([k, v]) => [k, Buffer.isBuffer(v) ? `${v.toString('latin1')} ${v.toString('hex')}` : v]);
        lines.push(`${table}: ${JSON.stringify(Object.fromEntries(values))}`);
      }
    }
    return lines;
  } finally {
    db.close();
  }
}

/** One row count. */
export function count(dbPath: string, sql: string, ...params: unknown[]): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare(sql).get(...params) as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Keys of a stage's items with a status (default: done), in key order. */
export function doneKeys(dbPath: string, stage: string, status = 'done'): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (
      db.prepare('SELECT key FROM stage_items WHERE stage = ? AND status = ? ORDER BY key').all(stage, status) as { key: string }[]
    ).map((r) => r.key);
  } finally {
    db.close();
  }
}
