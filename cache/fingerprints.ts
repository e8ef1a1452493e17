import type { Db } from './store.js';
import { nowIso } from './store.js';

/**
 * Workload fingerprints per commit (migration 0008): what each workload's code ran at a base
 * commit, paths relative to the checkout. Written during validate (a cache: upserts, safe to
 * repeat), read by later candidates of the same commit, or of a nearby commit of the same
 * repository for the workloads whose covered files did not change.
 *
 * Fingerprints that failed (migration 0020): a workload that raised, skipped or timed out at a
 * base commit, kept per commit and environment (a digest of the base image's id and everything
 * else the outcome depends on) and read only at that commit in that environment.
 */

export interface StoredFingerprint {
  readonly workload: string;
  /** The benchmark's version (asv's hash of its code) when it was recorded. */
  readonly version: string | null;
  /** [path relative to the checkout, first line, last line], or null when fingerprinting failed. */
  readonly code: readonly (readonly [string, number, number])[] | null;
  readonly opaque: boolean;
  /** How long taking it took at the base, in milliseconds (setup and one traced call); null: not known. */
  readonly ms: number | null;
}

export interface FingerprintSet {
  readonly sha: string;
  readonly commitDate: string;
  readonly fingerprints: ReadonlyMap<string, StoredFingerprint>;
}

interface Row {
  sha: string;
  commit_date: string;
  workload: string;
  version: string | null;
  code: string | null;
  opaque: number;
  ms: number | null;
}

export class FingerprintCache {
  /** The fingerprints that failed, per commit and environment (migration 0020). */
  readonly failures: FingerprintFailures;

  constructor(private readonly db: Db) {
    this.failures = new FingerprintFailures(db);
  }

  #set(rows: readonly Row[]): FingerprintSet | null {
    const first = rows[0];
    if (!first) return null;
    const fingerprints = new Map(
      rows.map((r) => [
        r.workload,
        {
          workload: r.workload,
          version: r.version,
          code: r.code === null ? null : (JSON.parse(r.code) as [string, number, number][]),
          opaque: r.opaque === 1,
          ms: r.ms,
        },
      ]),
    );
    return { sha: first.sha, commitDate: first.commit_date, fingerprints };
  }

  /** The fingerprints recorded at this commit. */
  at(repo: string, sha: string): FingerprintSet | null {
    return this.#set(this.db.prepare<[string, string], Row>('SELECT * FROM fingerprints WHERE repo = ? AND sha = ?').all(repo, sha));
  }

  /** The fingerprints of the other commit of the repository nearest in date to `commitDate`. */
  nearest(repo: string, sha: string, commitDate: string): FingerprintSet | null {
    const near = this.db
      .prepare<[string, string, string], { sha: string }>(
        `SELECT sha FROM fingerprints WHERE repo = ? AND sha <> ? GROUP BY sha
         ORDER BY ABS(julianday(MAX(commit_date)) - julianday(?)), sha LIMIT 1`,
      )
      .get(repo, sha, commitDate);
    return near ? this.at(repo, near.sha) : null;
  }

  /** Records (or replaces) a commit's fingerprints. */
  save(repo: string, sha: string, commitDate: string, fingerprints: readonly StoredFingerprint[]): void {
    const insert = this.db.prepare(
      `INSERT INTO fingerprints (repo, sha, commit_date, workload, version, code, opaque, ms, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (repo, sha, workload) DO UPDATE SET commit_date = excluded.commit_date, version = excluded.version, code = excluded.code, opaque = excluded.opaque, ms = excluded.ms, recorded_at = excluded.recorded_at`,
    );
    const now = nowIso();
    this.db.transaction(() => {
      for (const f of fingerprints)
        insert.run(
          repo,
          sha,
          commitDate,
          f.workload,
          f.version,
          f.code === null ? null : JSON.stringify(f.code),
          f.opaque ? 1 : 0,
          f.ms,
          now,
        );
    })();
  }
}

/** What a workload's own failure at the base can be (a worker that died says nothing of the workload: never stored). */
export type FingerprintFailureStatus = 'skipped' | 'failed' | 'timeout';

export interface StoredFingerprintFailure {
  readonly workload: string;
  readonly status: FingerprintFailureStatus;
  readonly message: string;
  /** The time limit it was taken under, in seconds. */
  readonly timeoutSeconds: number | null;
  /** How long taking it took, in milliseconds. */
  readonly ms: number | null;
}

interface FailureRow {
  workload: string;
  status: FingerprintFailureStatus;
  message: string;
  timeout_s: number | null;
  ms: number | null;
}

/** The longest message kept with a failure. */
const MESSAGE_CHARS = 2000;

export class FingerprintFailures {
  constructor(private readonly db: Db) {}

  /** The failures recorded at this commit in this environment, by workload. */
  at(repo: string, sha: string, environment: string): Map<string, StoredFingerprintFailure> {
    const rows = this.db
      .prepare<[string, string, string], FailureRow>(
        'SELECT workload, status, message, timeout_s, ms FROM fingerprint_failures WHERE repo = ? AND sha = ? AND environment = ?',
      )
      .all(repo, sha, environment);
    return new Map(
      rows.map((r) => [r.workload, { workload: r.workload, status: r.status, message: r.message, timeoutSeconds: r.timeout_s, ms: r.ms }]),
    );
  }

  /** Records (or replaces) a workload's failure at this commit in this environment. */
  save(repo: string, sha: string, environment: string, f: StoredFingerprintFailure): void {
    this.db
      .prepare(
        `INSERT INTO fingerprint_failures (repo, sha, environment, workload, status, message, timeout_s, ms, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (repo, sha, environment, workload) DO UPDATE SET status = excluded.status, message = excluded.message,
           timeout_s = excluded.timeout_s, ms = excluded.ms, recorded_at = excluded.recorded_at`,
      )
      .run(repo, sha, environment, f.workload, f.status, f.message.slice(0, MESSAGE_CHARS), f.timeoutSeconds, f.ms, nowIso());
  }

  /** Forgets a workload's failure at this commit in this environment (it was taken again and did not fail). */
  forget(repo: string, sha: string, environment: string, workload: string): void {
    this.db
      .prepare('DELETE FROM fingerprint_failures WHERE repo = ? AND sha = ? AND environment = ? AND workload = ?')
      .run(repo, sha, environment, workload);
  }
}
