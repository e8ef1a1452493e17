import type { Db } from './store.js';
import { nowIso } from './store.js';

/**
 * Workload fingerprints per commit (migration 0008): what each workload's code ran at a base
 * commit, paths relative to the checkout. Written during validate (a cache: upserts, safe to
 * repeat), read by later candidates of the same commit, or of a nearby commit of the same
 * repository for the workloads whose covered files did not change.
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
  constructor(private readonly db: Db) {}

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
