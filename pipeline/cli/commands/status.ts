import type { Command } from 'commander';
import { Ledger, type LedgerRow, type StatusCount } from '../../../cache/ledger.js';
import { clearRun, recentRuns, type RunRow } from '../../../cache/runs.js';
import { openStore, schemaStatus } from '../../../cache/store.js';
import { ExecutorJobs } from '../../../cache/executor-jobs.js';
import { ConfigError } from '../../errors.js';
import { registry as defaultRegistry, type Registry } from '../../registry.js';
import { STAGE_NAMES, type StageName } from '../../stage.js';
import { byReason } from '../../summary.js';
import { checkDatabasePath } from '../../../cache/database-path.js';
import { lastStop, type RunStop } from '../../last-stop.js';
import { describeDb } from '../db-label.js';
import { resolveMonthFlag, resolveStageFlag } from '../scope-options.js';
import { openSession, print, printJson, type GlobalFlags } from '../session.js';

interface StatusFlags {
  readonly month?: string;
  readonly stage?: string;
  readonly items?: boolean;
  readonly clearRun?: string;
}

export interface StageFunnel {
  readonly stage: StageName;
  /** false: this version has no such stage (reported as unknown, not faked). */
  readonly registered: boolean;
  readonly done: number;
  readonly dropped: number;
  readonly failed: number;
  readonly pending: number;
  /**
   * Items the stage before it passed on that this stage has not planned yet: the previous stage's
   * done count when this stage has no item at all (a run stopped before it, or never reached it).
   */
  readonly waiting: number;
  readonly droppedBy: Record<string, number>;
  readonly failedBy: Record<string, number>;
}

/** Per stage: counts by status, and drops and failures by reason. Pure. */
export function funnel(counts: readonly StatusCount[], stages: readonly StageName[] = STAGE_NAMES, registry: Registry = defaultRegistry): StageFunnel[] {
  return stages.map((stage) => {
    const mine = counts.filter((c) => c.stage === stage);
    const total = (status: string) => mine.filter((c) => c.status === status).reduce((a, c) => a + c.count, 0);
    const by = (status: string) => Object.fromEntries(mine.filter((c) => c.status === status).map((c) => [c.reason ?? 'unspecified', c.count]));
    const previous = STAGE_NAMES[STAGE_NAMES.indexOf(stage) - 1];
    const upstreamDone = counts.filter((c) => c.stage === previous && c.status === 'done').reduce((a, c) => a + c.count, 0);
    return {
      stage,
      registered: registry.has(stage),
      done: total('done'),
      dropped: total('dropped'),
      failed: total('failed'),
      pending: total('pending'),
      waiting: mine.length === 0 && registry.has(stage) ? upstreamDone : 0,
      droppedBy: by('dropped'),
      failedBy: by('failed'),
    };
  });
}

export function formatFunnel(rows: readonly StageFunnel[], stop: RunStop | null = null): string {
  const header = ['stage', 'done', 'dropped', 'failed', 'pending'];
  const cells = rows.map((r) =>
    r.registered || r.done + r.dropped + r.failed + r.pending > 0
      ? [r.stage, String(r.done), String(r.dropped), String(r.failed), String(r.pending)]
      : [r.stage, 'unknown (not implemented in this version)', '', '', ''],
  );
  const widths = header.map((h, i) =>
    Math.max(h.length, ...cells.filter((c) => c[2] !== '').map((c) => c[i]!.length), ...(i === 0 ? cells.map((c) => c[0]!.length) : [])),
  );
  const fmt = (c: readonly string[]) =>
    c[2] === '' ? `${c[0]!.padEnd(widths[0]!)}  ${c[1]}` : c.map((x, i) => (i === 0 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join('  ');
  const lines = [fmt(header)];
  for (const [i, r] of rows.entries()) {
    lines.push(fmt(cells[i]!));
    if (r.dropped > 0) lines.push(`    dropped: ${byReason(r.droppedBy)}`);
    if (r.failed > 0) lines.push(`    failed:  ${byReason(r.failedBy)}`);
    const stoppedHere = stop?.stage === r.stage;
    if (r.waiting > 0) lines.push(`    waiting: ${r.waiting} done by ${STAGE_NAMES[STAGE_NAMES.indexOf(r.stage) - 1]}, not planned by ${r.stage} yet${stoppedHere ? ' (the last run stopped here, see below)' : ''}`);
  }
  if (stop) lines.push(...formatStop(stop));
  return lines.join('\n');
}

/** The lines that say where the last run stopped, why, and what to do. */
export function formatStop(stop: RunStop): string[] {
  const lines = [`the last run${stop.window ? ` of ${stop.window}` : ''} (#${stop.runId}) stopped at ${stop.stage} (${stop.reason}); the stages after it did not run:`];
  for (const issue of stop.issues) lines.push(`  ${issue}`);
  if (stop.fix) lines.push(`  fix: ${stop.fix}`);
  return lines;
}

function itemJson(row: LedgerRow) {
  return {
    key: row.key,
    status: row.status,
    reason: row.reason,
    detail: row.detail,
    repo: row.repo,
    at: row.at,
    attempts: row.attempts,
    errorKind: row.errorKind,
    lastError: row.lastError,
    stageVersion: row.stageVersion,
    updatedAt: row.updatedAt,
  };
}

function runJson(run: RunRow) {
  return {
    id: run.id,
    command: run.command,
    window: run.window_label,
    status: run.status,
    exitCode: run.exit_code,
    startedAt: run.started_at,
    finishedAt: run.finished_at,
    pid: run.pid,
    host: run.host,
  };
}

export function registerStatus(program: Command, registry: Registry): void {
  program
    .command('status')
    .description('the funnel so far: per stage, items done / dropped / failed / pending, with reasons')
    .option('--month <YYYY-MM>', 'only items of this month (repositories always count)')
    .option('--stage <stage>', 'only this stage')
    .option('--items', 'with --stage: list every item with its status and reason')
    .option('--clear-run <id>', 'mark a run left "running" by a host that is gone as crashed (releases the database)')
    .action(async (flags: StatusFlags, command: Command) => {
      process.exitCode = statusCommand(flags, command.optsWithGlobals<GlobalFlags>(), registry);
    });
}

export function statusCommand(flags: StatusFlags, globals: GlobalFlags, registry: Registry = defaultRegistry): number {
  const isRegistered = (name: StageName) => registry.has(name);
  const session = openSession(globals);
  const window = resolveMonthFlag(flags.month);
  const stage = resolveStageFlag('--stage', flags.stage);
  if (flags.items && !stage) throw new ConfigError('--items: needs --stage <stage>', { reason: 'invalid-flags' });
  const path = session.config.db;

  if (flags.clearRun !== undefined) {
    if (!/^[1-9]\d*$/.test(flags.clearRun)) {
      throw new ConfigError(`--clear-run: expected a run id (a positive whole number, as "recent runs" in perfmine status lists them), got "${flags.clearRun}"`, { reason: 'invalid-flags' });
    }
    if (checkDatabasePath(path, 'write') === 'absent') throw new ConfigError(`db: no database at ${path}: there is no run to clear`, { reason: 'no-database', fix: 'pass --db the database the run uses' });
    const db = openStore(path);
    const ok = clearRun(db, Number(flags.clearRun));
    db.close();
    print(`${ok ? `run ${flags.clearRun} marked crashed` : `run ${flags.clearRun} is not running; nothing to do`}${describeDb(path, ' (database %s)')}`);
    return 0;
  }

  const stages = stage ? [stage] : [...STAGE_NAMES];
  const state = checkDatabasePath(path, 'read');
  if (state !== 'sqlite') {
    const empty = funnel([], stages, registry);
    if (session.json) printJson(flags.items ? { stage, registered: isRegistered(stage!), items: [] } : { db: path, exists: state === 'empty', window: window?.label ?? null, stages: empty, runs: [] });
    else print(`${state === 'absent' ? `no database at ${path} yet` : `${path} is an empty file (0 bytes: a run stopped before it wrote anything)`}: nothing has run.\n${formatFunnel(empty)}`);
    return 0;
  }

  const db = openStore(path, { readonly: true });
  try {
    const ledger = new Ledger(db);
    const filter = window ? { window } : {};
    if (flags.items && stage) {
      const items = ledger.list(stage, filter).map(itemJson);
      if (session.json) printJson({ stage, registered: isRegistered(stage), window: window?.label ?? null, items });
      else {
        if (!isRegistered(stage)) print(`stage ${stage}: unknown (not implemented in this version)`);
        for (const it of items) print(`${it.status.padEnd(8)} ${it.key}${it.reason ? `  ${it.reason}` : ''}${it.detail ? `  ${it.detail}` : ''}${it.lastError ? `  ${it.lastError}` : ''}`);
        if (items.length === 0) print('no items');
      }
      return 0;
    }
    const rows = funnel(ledger.counts(filter), stages, registry);
    const schema = schemaStatus(db);
    const runs = recentRuns(db, 5);
    const stop = lastStop(db, window?.label ?? null);
    const jobs = new ExecutorJobs(db).inFlight().filter((j) => stages.includes(j.stage as StageName));
    if (session.json) {
      printJson({ db: path, exists: true, schema, window: window?.label ?? null, stages: rows, lastStop: stop, runs: runs.map(runJson), slurmJobs: jobs });
      return 0;
    }
    const lines = [
      `database: ${path} (schema ${schema.applied.at(-1) ?? 0}${schema.pending.length ? `, ${schema.pending.length} migration(s) pending: run any stage to apply` : ''})`,
      `window: ${window?.label ?? 'all items'}`,
      formatFunnel(rows, stop),
    ];
    if (jobs.length > 0) {
      lines.push('Slurm jobs in flight (executor: slurm):');
      for (const j of jobs) lines.push(`  ${j.stage} ${j.slurmState.toLowerCase()}: ${j.jobIds.length === 0 ? 'being submitted' : j.jobIds.join(' ')}`);
    }
    if (runs.length > 0) {
      lines.push('recent runs:');
      for (const r of runs) lines.push(`  #${r.id} ${r.command} ${r.window_label ?? ''} ${r.status}${r.exit_code === null ? '' : ` (exit ${r.exit_code})`} ${r.started_at}`);
    }
    print(lines.join('\n'));
    return 0;
  } finally {
    db.close();
  }
}
