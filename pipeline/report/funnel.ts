import type { StatusCount } from '../../cache/ledger.js';
import { STAGE_NAMES, type StageName } from '../stage.js';

export interface StageFunnel {
  readonly stage: StageName;
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
export function funnel(counts: readonly StatusCount[], stages: readonly StageName[] = STAGE_NAMES): StageFunnel[] {
  return stages.map((stage) => {
    const mine = counts.filter((c) => c.stage === stage);
    const total = (status: string) => mine.filter((c) => c.status === status).reduce((a, c) => a + c.count, 0);
    const by = (status: string) =>
      Object.fromEntries(mine.filter((c) => c.status === status).map((c) => [c.reason ?? 'unspecified', c.count]));
    const previous = STAGE_NAMES[STAGE_NAMES.indexOf(stage) - 1];
    const upstreamDone = counts.filter((c) => c.stage === previous && c.status === 'done').reduce((a, c) => a + c.count, 0);
    return {
      stage,
      done: total('done'),
      dropped: total('dropped'),
      failed: total('failed'),
      pending: total('pending'),
      waiting: mine.length === 0 ? upstreamDone : 0,
      droppedBy: by('dropped'),
      failedBy: by('failed'),
    };
  });
}
