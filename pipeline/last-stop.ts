import type { RunRow } from '../cache/runs.js';
import type { Db } from '../cache/store.js';

/** Where and why the latest run of a window stopped, as its summary recorded it. */
export interface RunStop {
  readonly runId: number;
  readonly window: string | null;
  readonly stage: string;
  readonly reason: string;
  readonly issues: readonly string[];
  readonly fix: string | null;
}

/** The stop a run's summary records, or null (it ran to its end, or its summary is unreadable). Pure. */
export function stopOf(run: Pick<RunRow, 'id' | 'window_label' | 'summary'>): RunStop | null {
  if (!run.summary) return null;
  let summary: { stopped?: { stage?: unknown; reason?: unknown; issues?: unknown; fix?: unknown } | null };
  try {
    summary = JSON.parse(run.summary) as typeof summary;
  } catch {
    return null;
  }
  const s = summary.stopped;
  if (!s || typeof s.stage !== 'string' || typeof s.reason !== 'string') return null;
  return {
    runId: run.id,
    window: run.window_label,
    stage: s.stage,
    reason: s.reason,
    issues: Array.isArray(s.issues) ? s.issues.filter((x): x is string => typeof x === 'string') : [],
    fix: typeof s.fix === 'string' ? s.fix : null,
  };
}

/**
 * Why the pipeline stands where it stands: the stop of the latest finished `run`/`stage`
 * command (of this window when one is given), or null when that run was not stopped.
 */
export function lastStop(db: Db, window: string | null = null): RunStop | null {
  const run =
    window === null
      ? db.prepare<[], RunRow>("SELECT * FROM runs WHERE status <> 'running' ORDER BY id DESC LIMIT 1").get()
      : db
          .prepare<[string], RunRow>("SELECT * FROM runs WHERE status <> 'running' AND window_label = ? ORDER BY id DESC LIMIT 1")
          .get(window);
  return run ? stopOf(run) : null;
}
