import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { checkDatabasePath } from '../../../cache/database-path.js';
import { openStore } from '../../../cache/store.js';
import { checkOutputFile } from '../../paths.js';
import { describeDb } from '../db-label.js';
import { ConfigError } from '../../errors.js';
import { loadReportData } from '../../report/load.js';
import { renderReport } from '../../report/render.js';
import { monthWindow, previousMonth } from '../../window.js';
import { resolveMonthFlag } from '../scope-options.js';
import { openSession, print, printJson, type GlobalFlags } from '../session.js';

export interface ReportFlags {
  readonly month?: string;
}

export function reportCommand(flags: ReportFlags, globals: GlobalFlags): number {
  // The global --out (datasets directory) names the page here; the datasets come from the config.
  const { out: page, ...rest } = globals;
  if (!page)
    throw new ConfigError('--out: required: where to write the page (perfmine report --month YYYY-MM --out report.html)', {
      reason: 'invalid-flags',
    });
  const session = openSession(rest);
  const window = resolveMonthFlag(flags.month) ?? monthWindow(previousMonth(new Date()));
  const path = session.config.db;
  const reportPath = resolve(page);
  checkOutputFile(reportPath, '--out', `report-${window.label}.html`);
  if (checkDatabasePath(path, 'read') === 'absent')
    throw new ConfigError(`db: no database at ${path}`, { reason: 'no-database', fix: 'run perfmine first, or pass --db' });
  const db = openStore(path, { readonly: true });
  try {
    const data = loadReportData(db, window, { out: resolve(session.config.out), reportPath, gate: session.config.emit.publish });
    mkdirSync(dirname(reportPath), { recursive: true });
    writeFileSync(reportPath, renderReport(data));
    const emitted = data.tasks.length;
    if (session.json) printJson({ report: reportPath, db: path, month: window.label, tasks: emitted, repositories: data.funnel.length });
    else
      print(
        `wrote ${reportPath}: ${window.label}, ${data.funnel.length} repositories, ${emitted} task${emitted === 1 ? '' : 's'} emitted${describeDb(path, ', from the database %s')}`,
      );
    return 0;
  } finally {
    db.close();
  }
}
