import type { z } from 'zod';
import type { LedgerRow } from '../cache/ledger.js';
import type { Scope } from './scope.js';
import type { PipelineContext, StageName } from './stage.js';

/** A done item of the stage before, with its output read through the stage's record schema. */
export interface PreviousOutput<T> {
  readonly row: LedgerRow;
  readonly output: T;
}

/**
 * The done items of `previous` in the scope (window, `--repo`, and `--pr` for outputs with a
 * pull request `number`), their outputs parsed with `schema`. An output the schema does not read
 * is logged and left out (the item is skipped, not failed): how a stage plans from the store.
 */
export function previousOutputs<S extends z.ZodType>(
  ctx: PipelineContext,
  stage: StageName,
  previous: StageName,
  schema: S,
  scope: Scope,
): PreviousOutput<z.infer<S>>[] {
  const rows = ctx.ledger.list(previous, { window: scope.window, includeTimeless: false, repos: scope.repos, statuses: ['done'] });
  const out: PreviousOutput<z.infer<S>>[] = [];
  for (const row of rows) {
    const parsed = schema.safeParse(row.output);
    if (!parsed.success) {
      ctx.log.warn({ stage, item: row.key, issue: parsed.error.issues[0]?.message }, `${previous} output unreadable; item skipped`);
      continue;
    }
    const number = (parsed.data as { number?: unknown }).number;
    if (scope.prs.length > 0 && typeof number === 'number' && !scope.prs.includes(number)) continue;
    out.push({ row, output: parsed.data });
  }
  return out;
}
