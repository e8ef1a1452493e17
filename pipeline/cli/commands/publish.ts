import { resolve } from 'node:path';
import { checkDatabasePath } from '../../../cache/database-path.js';
import { Ledger } from '../../../cache/ledger.js';
import { openStore } from '../../../cache/store.js';
import { monthTasks } from '../../../stages/emit/index.js';
import { datasetFiles, type PublishedMonth } from '../../../stages/emit/publish/dataset-files.js';
import { writeDataset, type WriteReport } from '../../../stages/emit/publish/write-dataset.js';
import { gatedMonth, leftOutLine } from '../../../stages/emit/publish/task-replays.js';
import type { GateDecision } from '../../../stages/emit/publish/replay-gate.js';
import { harborDatasetFiles } from '../../../stages/emit/publish/harbor/harbor-dataset.js';
import { harborOptionsOf } from '../../services/verifier/options.js';
import { writeHarbor } from '../../../stages/emit/publish/harbor/write-harbor.js';
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
  /** `hf` (default): a Hugging Face dataset folder; `harbor`: one Harbor task folder per task. */
  readonly format?: string;
  /** Overrides emit.publish.minReplays (0: no replay gate). */
  readonly minReplays?: string;
}

export const PUBLISH_FORMATS = ['hf', 'harbor'] as const;

export interface PublishRun extends WriteReport {
  readonly format: (typeof PUBLISH_FORMATS)[number];
  readonly dir: string;
  readonly months: readonly { readonly month: string; readonly tasks: number }[];
  /** Emitted tasks the replay gate left out (emit.publish), with the reason. */
  readonly leftOut: readonly Pick<GateDecision, 'instanceId' | 'month' | 'reason' | 'detail'>[];
}

/** `perfmine publish`: the emitted months (all, or `--months`) as a Hugging Face dataset folder, or as Harbor tasks. */
export function runPublish(flags: PublishFlags, globals: GlobalFlags): PublishRun {
  if (!flags.to) throw new ConfigError('publish: --to DIR is required', { reason: 'usage', fix: 'perfmine publish --to ./dataset' });
  const format = flags.format ?? 'hf';
  if (format !== 'hf' && format !== 'harbor')
    throw new ConfigError(`--format ${format}: not one of ${PUBLISH_FORMATS.join(', ')}`, { reason: 'usage' });
  const minReplays = flags.minReplays === undefined ? undefined : Number(flags.minReplays);
  if (minReplays !== undefined && !(Number.isInteger(minReplays) && minReplays >= 0))
    throw new ConfigError(`--min-replays ${flags.minReplays}: not a whole number of 0 or more`, { reason: 'usage' });
  const session = openSession(globals, minReplays === undefined ? {} : { emit: { publish: { minReplays } } });
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
    // only the tasks whose replays replicate (the gate, emit.publish); the others are listed
    const months: PublishedMonth[] = wanted.map((month) =>
      gatedMonth(
        db,
        session.config.out,
        {
          month,
          tasks: monthTasks({ ledger, log: session.log, db }, month),
          funnel: funnelTotals(repoFunnel(ledger, monthWindow(month))),
          costs: monthCosts(month, costs.candidates, costs.commits),
        },
        session.config.emit.publish,
      ),
    );
    const leftOut = months.flatMap((m) =>
      (m.gate?.decisions ?? [])
        .filter((d) => !d.published)
        .map(({ instanceId, month, reason, detail }) => ({ instanceId, month, reason, detail })),
    );
    const dir = resolve(flags.to);
    // both formats publish the same tasks: the months' tasks as assembled above
    const report =
      format === 'harbor'
        ? writeHarbor(
            dir,
            harborDatasetFiles(
              months.flatMap((m) => m.tasks),
              harborOptionsOf(session.config),
            ),
          )
        : writeDataset(dir, datasetFiles(months));
    return { ...report, format, dir, months: months.map((m) => ({ month: m.month, tasks: m.tasks.length })), leftOut };
  } finally {
    db.close();
  }
}

/** `perfmine publish`'s action: write the dataset folder (or the Harbor tasks) and say what changed. */
export function publishCommand(flags: PublishFlags, globals: GlobalFlags): number {
  const run = runPublish(flags, globals);
  if (globals.json) printJson(run);
  else
    print(
      [
        `${run.dir}${run.format === 'harbor' ? ' (Harbor tasks)' : ''}: ${run.months.map((m) => `${m.month} (${m.tasks} task${m.tasks === 1 ? '' : 's'})`).join(', ') || 'no months'}`,
        `${run.written.length} file${run.written.length === 1 ? '' : 's'} written, ${run.unchanged} unchanged, ${run.removed.length} removed`,
        ...run.leftOut.map(leftOutLine),
      ].join('\n'),
    );
  return 0;
}
