import { Ledger, type LedgerRow } from '../../../cache/ledger.js';
import { clearRun, recentRuns, type RunRow } from '../../../cache/runs.js';
import { openStore, schemaStatus } from '../../../cache/store.js';
import { ExecutorJobs } from '../../../cache/executor-jobs.js';
import { loadAccounts } from '../../../cache/measurements.js';
import { accountTotals, formatAccount, formatTotals, sumTotals, type MeasurementAccount } from '../../concepts/measurement-account.js';
import { ConfigError } from '../../errors.js';
import { STAGE_NAMES, type StageName } from '../../stage.js';
import { byReason } from '../../summary.js';
import { textTable } from '../../text-table.js';
import { checkDatabasePath } from '../../../cache/database-path.js';
import { lastStop, type RunStop } from '../../last-stop.js';
import { describeDb } from '../db-label.js';
import { funnel, type StageFunnel } from '../../report/funnel.js';
import { loadMonthCosts } from '../../report/costs.js';
import { costLines } from '../cost-lines.js';
import { resolveMonthFlag, resolveStageFlag } from '../scope-options.js';
import { openSession, print, printJson, type GlobalFlags } from '../session.js';

export interface StatusFlags {
  readonly month?: string;
  readonly stage?: string;
  readonly items?: boolean;
  readonly clearRun?: string;
}

export function formatFunnel(rows: readonly StageFunnel[], stop: RunStop | null = null): string {
  const header = ['stage', 'done', 'dropped', 'failed', 'pending'];
  const cells = rows.map((r) => [r.stage, String(r.done), String(r.dropped), String(r.failed), String(r.pending)]);
  const [head, ...body] = textTable(header, cells, { alignRight: (column) => column > 0 });
  const lines = [head!];
  for (const [i, r] of rows.entries()) {
    lines.push(body[i]!);
    if (r.dropped > 0) lines.push(`    dropped: ${byReason(r.droppedBy)}`);
    if (r.failed > 0) lines.push(`    failed:  ${byReason(r.failedBy)}`);
    const stoppedHere = stop?.stage === r.stage;
    if (r.waiting > 0)
      lines.push(
        `    waiting: ${r.waiting} done by ${STAGE_NAMES[STAGE_NAMES.indexOf(r.stage) - 1]}, not planned by ${r.stage} yet${stoppedHere ? ' (the last run stopped here, see below)' : ''}`,
      );
  }
  if (stop) lines.push(...formatStop(stop));
  return lines.join('\n');
}

/** The lines that say where the last run stopped, why, and what to do. */
export function formatStop(stop: RunStop): string[] {
  const lines = [
    `the last run${stop.window ? ` of ${stop.window}` : ''} (#${stop.runId}) stopped at ${stop.stage} (${stop.reason}); the stages after it did not run:`,
  ];
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

/** The sum over the listed items' measurements. */
function accountsSummary(accounts: readonly (MeasurementAccount | undefined)[]): string {
  const listed = accounts.filter((a): a is MeasurementAccount => a !== undefined);
  return `all ${listed.length} measurements: ${formatTotals(sumTotals(listed.map(accountTotals)))}`;
}

export function statusCommand(flags: StatusFlags, globals: GlobalFlags): number {
  const session = openSession(globals);
  const window = resolveMonthFlag(flags.month);
  const stage = resolveStageFlag('--stage', flags.stage);
  if (flags.items && !stage) throw new ConfigError('--items: needs --stage <stage>', { reason: 'invalid-flags' });
  const path = session.config.db;

  if (flags.clearRun !== undefined) {
    if (!/^[1-9]\d*$/.test(flags.clearRun)) {
      throw new ConfigError(
        `--clear-run: expected a run id (a positive whole number, as "recent runs" in perfmine status lists them), got "${flags.clearRun}"`,
        { reason: 'invalid-flags' },
      );
    }
    if (checkDatabasePath(path, 'write') === 'absent')
      throw new ConfigError(`db: no database at ${path}: there is no run to clear`, {
        reason: 'no-database',
        fix: 'pass --db the database the run uses',
      });
    const db = openStore(path);
    const ok = clearRun(db, Number(flags.clearRun));
    db.close();
    print(
      `${ok ? `run ${flags.clearRun} marked crashed` : `run ${flags.clearRun} is not running; nothing to do`}${describeDb(path, ' (database %s)')}`,
    );
    return 0;
  }

  const stages = stage ? [stage] : [...STAGE_NAMES];
  const state = checkDatabasePath(path, 'read');
  if (state !== 'sqlite') {
    const empty = funnel([], stages);
    if (session.json)
      printJson(
        flags.items
          ? { stage, items: [] }
          : { db: path, exists: state === 'empty', window: window?.label ?? null, stages: empty, runs: [] },
      );
    else
      print(
        `${state === 'absent' ? `no database at ${path} yet` : `${path} is an empty file (0 bytes: a run stopped before it wrote anything)`}: nothing has run.\n${formatFunnel(empty)}`,
      );
    return 0;
  }

  const db = openStore(path, { readonly: true });
  try {
    const ledger = new Ledger(db);
    const filter = window ? { window } : {};
    if (flags.items && stage) {
      const items = ledger.list(stage, filter).map(itemJson);
      // validate: where each measurement's time went (issue 37), as recorded with the validation
      const accounts: ReadonlyMap<string, MeasurementAccount> = stage === 'validate' ? loadAccounts(db) : new Map();
      if (session.json)
        printJson({
          stage,
          window: window?.label ?? null,
          items: items.map((it) => {
            const account = accounts.get(it.key);
            return account ? { ...it, account: { ...account, totals: accountTotals(account) } } : it;
          }),
        });
      else {
        for (const it of items) {
          print(
            `${it.status.padEnd(8)} ${it.key}${it.reason ? `  ${it.reason}` : ''}${it.detail ? `  ${it.detail}` : ''}${it.lastError ? `  ${it.lastError}` : ''}`,
          );
          const account = accounts.get(it.key);
          if (account) for (const line of formatAccount(account)) print(`         ${line}`);
        }
        if (items.length === 0) print('no items');
        if (accounts.size > 1) print(accountsSummary(items.map((it) => accounts.get(it.key))));
      }
      return 0;
    }
    const rows = funnel(ledger.counts(filter), stages);
    const schema = schemaStatus(db);
    const runs = recentRuns(db, 5);
    const stop = lastStop(db, window?.label ?? null);
    // what the month's tasks cost (issue 30): with --month, over the whole funnel
    const costs = window && !stage ? loadMonthCosts(db, window.label) : null;
    // `perfmine score`'s jobs (stage "score") show with the whole funnel
    const jobs = new ExecutorJobs(db)
      .inFlight()
      .filter((j) => stages.includes(j.stage as StageName) || (j.stage === 'score' && stages.length === STAGE_NAMES.length));
    if (session.json) {
      printJson({
        db: path,
        exists: true,
        schema,
        window: window?.label ?? null,
        stages: rows,
        lastStop: stop,
        ...(costs ? { costs } : {}),
        runs: runs.map(runJson),
        slurmJobs: jobs,
      });
      return 0;
    }
    const lines = [
      `database: ${path} (schema ${schema.applied.at(-1) ?? 0}${schema.pending.length ? `, ${schema.pending.length} migration(s) pending: run any stage to apply` : ''})`,
      `window: ${window?.label ?? 'all items'}`,
      formatFunnel(rows, stop),
      ...(costs ? costLines(costs) : []),
    ];
    if (jobs.length > 0) {
      lines.push('Slurm jobs in flight (executor: slurm):');
      for (const j of jobs)
        lines.push(`  ${j.stage} ${j.slurmState.toLowerCase()}: ${j.jobIds.length === 0 ? 'being submitted' : j.jobIds.join(' ')}`);
    }
    if (runs.length > 0) {
      lines.push('recent runs:');
      for (const r of runs)
        lines.push(
          `  #${r.id} ${r.command} ${r.window_label ?? ''} ${r.status}${r.exit_code === null ? '' : ` (exit ${r.exit_code})`} ${r.started_at}`,
        );
    }
    print(lines.join('\n'));
    return 0;
  } finally {
    db.close();
  }
}
