import { resolve } from 'node:path';
import { checkDatabasePath } from '../../../cache/database-path.js';
import { Ledger } from '../../../cache/ledger.js';
import { openStore } from '../../../cache/store.js';
import { monthTasks } from '../../../stages/emit/index.js';
import { datasetFiles, type PublishedMonth } from '../../../stages/emit/publish/dataset-files.js';
import { writeDataset, type WriteReport } from '../../../stages/emit/publish/write-dataset.js';
import { ConfigError } from '../../errors.js';
import { repoFunnel } from '../../report/load.js';
import { costInputs } from '../../report/costs.js';
import { monthCosts } from '../../concepts/task-costs.js';
import { funnelTotals } from '../../report/render.js';
import { monthOf, monthWindow } from '../../window.js';
import { noteDb } from '../db-label.js';
import { openSession, print, printJson, type GlobalFlags } from '../session.js';

export interface PublishFlags {
  readonly to?: string;
  readonly months?: string[];
}

export interface PublishRun extends WriteReport {
  readonly dir: string;
  readonly months: readonly { readonly month: string; readonly tasks: number }[];
}

/** `perfmine publish`: the emitted months (all, or `--months`) as a Hugging Face dataset folder. */
export function runPublish(flags: PublishFlags, globals: GlobalFlags): PublishRun {
  if (!flags.to) throw new ConfigError('publish: --to DIR is required', { reason: 'usage', fix: 'perfmine publish --to ./dataset' });
  const session = openSession(globals);
  const path = session.config.db;
  if (checkDatabasePath(path, 'read') !== 'sqlite')
    throw new ConfigError(`db: no database at ${path}: nothing was emitted`, { reason: 'no-database' });
  for (const m of flags.months ?? [])
    if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(m)) throw new ConfigError(`--months ${m}: not YYYY-MM`, { reason: 'usage' });
  if (!session.json) noteDb(path);
  const db = openStore(path, { readonly: true });
  try {
    const ledger = new Ledger(db);
    const emitted = [...new Set(ledger.list('emit', { statuses: ['done'] }).flatMap((r) => (r.at ? [monthOf(r.at)] : [])))].sort();
    const wanted = flags.months && flags.months.length > 0 ? [...new Set(flags.months)].sort() : emitted;
    const costs = costInputs(db);
    const months: PublishedMonth[] = wanted.map((month) => ({
      month,
      tasks: monthTasks({ ledger, log: session.log, db }, month),
      funnel: funnelTotals(repoFunnel(ledger, monthWindow(month))),
      costs: monthCosts(month, costs.candidates, costs.commits),
    }));
    const dir = resolve(flags.to);
    const report = writeDataset(dir, datasetFiles(months));
    return { ...report, dir, months: months.map((m) => ({ month: m.month, tasks: m.tasks.length })) };
  } finally {
    db.close();
  }
}

/** `perfmine publish`'s action: write the dataset folder and say what changed. */
export function publishCommand(flags: PublishFlags, globals: GlobalFlags): number {
  const run = runPublish(flags, globals);
  if (globals.json) printJson(run);
  else
    print(
      [
        `${run.dir}: ${run.months.map((m) => `${m.month} (${m.tasks} task${m.tasks === 1 ? '' : 's'})`).join(', ') || 'no months'}`,
        `${run.written.length} file${run.written.length === 1 ? '' : 's'} written, ${run.unchanged} unchanged, ${run.removed.length} removed`,
      ].join('\n'),
    );
  return 0;
}
