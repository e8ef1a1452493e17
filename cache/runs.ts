import { hostname } from 'node:os';
import type { Db } from './store.js';
import { nowIso } from './store.js';
import { ConfigError } from '../pipeline/errors.js';

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'interrupted' | 'crashed';

export interface RunRow {
  readonly id: number;
  readonly command: string;
  readonly args: string;
  readonly window_label: string | null;
  readonly pid: number;
  readonly host: string;
  readonly started_at: string;
  readonly finished_at: string | null;
  readonly status: RunStatus;
  readonly exit_code: number | null;
  readonly summary: string | null;
}

export interface StartRun {
  readonly command: string;
  readonly args: unknown;
  readonly windowLabel: string | null;
}

/** Whether a process with this pid exists on this host. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Starts a run and takes the database's writer lock in one immediate transaction: a run left
 * `running` by a process that no longer exists on this host is marked crashed; a live one makes
 * this call refuse with a message that names it.
 */
export function startRun(db: Db, run: StartRun, pid = process.pid): number {
  const host = hostname();
  const tx = db.transaction(() => {
    for (const crashed of refuseIfBusy(db, host)) {
      db.prepare("UPDATE runs SET status = 'crashed', finished_at = ? WHERE id = ?").run(nowIso(), crashed.id);
    }
    const info = db
      .prepare('INSERT INTO runs (command, args, window_label, pid, host, started_at, status) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(run.command, JSON.stringify(run.args), run.windowLabel, pid, host, nowIso(), 'running');
    return Number(info.lastInsertRowid);
  });
  return tx.immediate();
}

/**
 * Throws the ConfigError startRun would (another live run holds the database) and returns the
 * runs left `running` by dead processes of this host, which startRun marks crashed. Writes
 * nothing: a dry run asks it of a snapshot.
 */
export function refuseIfBusy(db: Db, host = hostname()): RunRow[] {
  const crashed: RunRow[] = [];
  for (const other of db.prepare<[], RunRow>("SELECT * FROM runs WHERE status = 'running' ORDER BY id").all()) {
    if (other.host === host && !processAlive(other.pid)) {
      crashed.push(other);
      continue;
    }
    throw new ConfigError(
      `db: another perfmine (${other.command}, pid ${other.pid} on ${other.host}, started ${other.started_at}) is using this database`,
      {
        reason: 'database-busy',
        fix:
          other.host === host
            ? 'wait for it to finish, or point --db at another file'
            : `wait for it to finish; if that host is gone, mark run ${other.id} crashed with: perfmine status --clear-run ${other.id}`,
      },
    );
  }
  return crashed;
}

export function finishRun(db: Db, id: number, status: Exclude<RunStatus, 'running'>, exitCode: number, summary: unknown): void {
  db.prepare('UPDATE runs SET status = ?, exit_code = ?, finished_at = ?, summary = ? WHERE id = ?').run(
    status,
    exitCode,
    nowIso(),
    JSON.stringify(summary),
    id,
  );
}

/** Marks a run crashed by hand (a run whose host is gone). */
export function clearRun(db: Db, id: number): boolean {
  return (
    db.prepare("UPDATE runs SET status = 'crashed', finished_at = ? WHERE id = ? AND status = 'running'").run(nowIso(), id).changes > 0
  );
}

export function recentRuns(db: Db, limit = 10): RunRow[] {
  return db.prepare<[number], RunRow>('SELECT * FROM runs ORDER BY id DESC LIMIT ?').all(limit);
}

export function activeRuns(db: Db): RunRow[] {
  return db.prepare<[], RunRow>("SELECT * FROM runs WHERE status = 'running' ORDER BY id").all();
}
