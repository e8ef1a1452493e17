/**
 * What the coordinator does with one job after a poll: pure, so that every rule (what is
 * resubmitted, when an item fails, which failure it is) is tested without Slurm.
 */

/** States in which the job may still produce its result. */
const ACTIVE = new Set([
  'PENDING',
  'CONFIGURING',
  'RUNNING',
  'COMPLETING',
  'SUSPENDED',
  'REQUEUED',
  'REQUEUE_HOLD',
  'REQUEUE_FED',
  'RESIZING',
  'SIGNALING',
  'STAGE_OUT',
  'STOPPED',
  'RESV_DEL_HOLD',
  'SPECIAL_EXIT',
]);

/** Ended without its result through no fault of the item: worth another submission. Each names its failure once attempts run out. */
const LOST: Readonly<Record<string, string>> = {
  TIMEOUT: 'slurm-time-limit',
  DEADLINE: 'slurm-time-limit',
  NODE_FAIL: 'slurm-node-failure',
  BOOT_FAIL: 'slurm-node-failure',
  PREEMPTED: 'slurm-preempted',
  CANCELLED: 'slurm-cancelled',
  REVOKED: 'slurm-cancelled',
  OUT_OF_MEMORY: 'slurm-out-of-memory',
};

/** What the spool holds for the job. */
export type ResultFile = 'ok' | 'missing' | 'unreadable';

export interface JobView {
  /** 1 for the first submission. */
  readonly attempt: number;
  /** The state squeue or sacct gave; null: Slurm knows no such job (yet, or any more). */
  readonly slurmState: string | null;
  readonly result: ResultFile;
  /** Polls in a row at which Slurm knew no such job. */
  readonly unknownPolls: number;
}

export type JobAction =
  | { readonly kind: 'wait' }
  | { readonly kind: 'ingest' }
  | { readonly kind: 'resubmit'; readonly reason: string }
  | { readonly kind: 'fail'; readonly reason: string; readonly message: string };

/** Polls a job may stay unknown to both squeue and sacct before it counts as lost (accounting can lag the controller). */
export const UNKNOWN_POLLS_BEFORE_LOST = 3;

export function decideJob(view: JobView, maxAttempts: number): JobAction {
  // A complete result is taken whatever Slurm says: it was renamed into place whole.
  if (view.result === 'ok') return { kind: 'ingest' };
  const state = view.slurmState;
  if (state !== null && ACTIVE.has(state)) return { kind: 'wait' };
  if (state === null) {
    if (view.unknownPolls < UNKNOWN_POLLS_BEFORE_LOST) return { kind: 'wait' };
    return lost('slurm-job-vanished', 'Slurm has no record of the job', view, maxAttempts);
  }
  if (view.result === 'unreadable') {
    return {
      kind: 'fail',
      reason: 'slurm-result-unreadable',
      message: `the job ended ${state} and its result file is truncated or not a result`,
    };
  }
  const lostReason = LOST[state];
  if (lostReason !== undefined) return lost(lostReason, `the job ended ${state} without a result`, view, maxAttempts);
  if (state === 'COMPLETED')
    return { kind: 'fail', reason: 'slurm-result-missing', message: 'the job completed without writing its result file' };
  // FAILED (the worker exited non-zero before writing a result) and anything unforeseen
  return { kind: 'fail', reason: 'slurm-job-failed', message: `the job ended ${state} without a result (see its log in the spool)` };
}

function lost(reason: string, message: string, view: JobView, maxAttempts: number): JobAction {
  if (view.attempt < maxAttempts) return { kind: 'resubmit', reason };
  return { kind: 'fail', reason, message: `${message}; ${view.attempt} of ${maxAttempts} attempt(s) used` };
}

/** An item's earlier attempts at this input, oldest first, with their ledger states. */
export type PriorAttempts = readonly { readonly attempt: number; readonly state: string }[];

export interface ResumeAction {
  /** adopt: an open attempt (submitting or submitted) is followed, never submitted again; submit: a new attempt. */
  readonly kind: 'adopt' | 'submit';
  readonly attempt: number;
  /** The first attempt that counts towards maxAttempts: the unbroken run of lost (and open) attempts at the end. */
  readonly firstCounted: number;
}

/**
 * On (re)start, per item. A new attempt is numbered after every earlier one. Attempts lost
 * before a crash of the coordinator still count towards maxAttempts; attempts before one that
 * was ingested, failed or cancelled (a finished or stopped run) do not.
 */
export function resumeItem(prior: PriorAttempts): ResumeAction {
  const last = prior.reduce((m, a) => Math.max(m, a.attempt), 0);
  let firstCounted: number | null = null;
  for (const a of [...prior].reverse()) {
    if (a.state !== 'lost' && a.state !== 'submitting' && a.state !== 'submitted') break;
    firstCounted = a.attempt;
  }
  const open = [...prior].reverse().find((a) => a.state === 'submitting' || a.state === 'submitted');
  if (open) return { kind: 'adopt', attempt: open.attempt, firstCounted: firstCounted ?? open.attempt };
  return { kind: 'submit', attempt: last + 1, firstCounted: firstCounted ?? last + 1 };
}

/** Attempts an item has used towards maxAttempts: from the first counted one to the current one. */
export function attemptsUsed(current: number, firstCounted: number): number {
  return current - firstCounted + 1;
}
