import type { Db } from './store.js';
import { nowIso } from './store.js';

/** A job row's state in the ledger (see 0009-executor-jobs.sql). */
export type JobRowState = 'submitting' | 'submitted' | 'ingested' | 'lost' | 'failed' | 'cancelled';

export interface JobRow {
  readonly stage: string;
  readonly key: string;
  readonly inputHash: string;
  readonly attempt: number;
  readonly jobName: string;
  readonly jobId: string | null;
  readonly state: JobRowState;
  readonly slurmState: string | null;
  readonly reason: string | null;
  readonly runId: number | null;
  readonly submittedAt: string;
  readonly updatedAt: string;
}

interface RawRow {
  stage: string;
  key: string;
  input_hash: string;
  attempt: number;
  job_name: string;
  job_id: string | null;
  state: JobRowState;
  slurm_state: string | null;
  reason: string | null;
  run_id: number | null;
  submitted_at: string;
  updated_at: string;
}

function toRow(r: RawRow): JobRow {
  return {
    stage: r.stage,
    key: r.key,
    inputHash: r.input_hash,
    attempt: r.attempt,
    jobName: r.job_name,
    jobId: r.job_id,
    state: r.state,
    slurmState: r.slurm_state,
    reason: r.reason,
    runId: r.run_id,
    submittedAt: r.submitted_at,
    updatedAt: r.updated_at,
  };
}

/** The executor's job ledger: which Slurm job carries which item, attempt by attempt. */
export class ExecutorJobs {
  constructor(private readonly db: Db) {}

  /** Every attempt of one item at one input, oldest first. */
  attempts(stage: string, key: string, inputHash: string): JobRow[] {
    return (
      this.db
        .prepare('SELECT * FROM executor_jobs WHERE stage = ? AND key = ? AND input_hash = ? ORDER BY attempt')
        .all(stage, key, inputHash) as RawRow[]
    ).map(toRow);
  }

  /** Every attempt of a stage, keyed by item and input hash (one read for a whole stage's planning). */
  byItem(stage: string): Map<string, JobRow[]> {
    const map = new Map<string, JobRow[]>();
    const rows = this.db.prepare('SELECT * FROM executor_jobs WHERE stage = ? ORDER BY key, input_hash, attempt').all(stage) as RawRow[];
    for (const raw of rows) {
      const row = toRow(raw);
      const id = itemId(row.key, row.inputHash);
      const list = map.get(id);
      if (list) list.push(row);
      else map.set(id, [row]);
    }
    return map;
  }

  /** Jobs not yet settled (submitting or submitted), of every stage. */
  open(stage?: string): JobRow[] {
    const sql =
      "SELECT * FROM executor_jobs WHERE state IN ('submitting', 'submitted')" +
      (stage ? ' AND stage = ?' : '') +
      ' ORDER BY stage, key, attempt';
    return ((stage ? this.db.prepare(sql).all(stage) : this.db.prepare(sql).all()) as RawRow[]).map(toRow);
  }

  /** Records an attempt before it is submitted (job id unknown yet). */
  recordSubmitting(row: { stage: string; key: string; inputHash: string; attempt: number; jobName: string; runId: number | null }): void {
    const now = nowIso();
    this.db
      .prepare(
        "INSERT INTO executor_jobs (stage, key, input_hash, attempt, job_name, job_id, state, run_id, submitted_at, updated_at) VALUES (?, ?, ?, ?, ?, NULL, 'submitting', ?, ?, ?)",
      )
      .run(row.stage, row.key, row.inputHash, row.attempt, row.jobName, row.runId, now, now);
  }

  setJobId(jobName: string, jobId: string): void {
    this.db
      .prepare("UPDATE executor_jobs SET job_id = ?, state = 'submitted', updated_at = ? WHERE job_name = ?")
      .run(jobId, nowIso(), jobName);
  }

  setSlurmState(jobName: string, slurmState: string): void {
    this.db
      .prepare('UPDATE executor_jobs SET slurm_state = ?, updated_at = ? WHERE job_name = ? AND slurm_state IS NOT ?')
      .run(slurmState, nowIso(), jobName, slurmState);
  }

  settle(
    jobName: string,
    state: Exclude<JobRowState, 'submitting' | 'submitted'>,
    reason: string | null,
    slurmState?: string | null,
  ): void {
    this.db
      .prepare('UPDATE executor_jobs SET state = ?, reason = ?, slurm_state = COALESCE(?, slurm_state), updated_at = ? WHERE job_name = ?')
      .run(state, reason, slurmState ?? null, nowIso(), jobName);
  }

  /** Open jobs per stage and Slurm state, for `perfmine status`. */
  inFlight(): { stage: string; slurmState: string; jobIds: string[] }[] {
    const rows = this.open();
    const groups = new Map<string, { stage: string; slurmState: string; jobIds: string[] }>();
    for (const r of rows) {
      const slurmState = r.jobId === null ? 'SUBMITTING' : (r.slurmState ?? 'SUBMITTED');
      const id = `${r.stage}\0${slurmState}`;
      const g = groups.get(id) ?? { stage: r.stage, slurmState, jobIds: [] };
      if (r.jobId !== null) g.jobIds.push(r.jobId);
      groups.set(id, g);
    }
    return [...groups.values()].sort((a, b) => a.stage.localeCompare(b.stage) || a.slurmState.localeCompare(b.slurmState));
  }
}

export function itemId(key: string, inputHash: string): string {
  return `${key}\0${inputHash}`;
}
