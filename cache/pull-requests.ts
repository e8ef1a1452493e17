import { createHash } from 'node:crypto';
import { pullRequestSchema, type PullRequest } from '../pipeline/concepts/records/pull-request.js';
import { prepared } from './prepared.js';
import type { Db } from './store.js';

/** A pull request record as it is stored: its JSON without the diff, and its content hash. */
export interface SerializedPullRequest {
  readonly json: string;
  readonly contentHash: string;
}

/**
 * The record's JSON (without the diff, which is stored as it is) and its content hash, the
 * SHA-256 of that JSON and the diff; downstream inputs depend on it. The JSON is the record's own
 * key order: collect's sources validate their records with `pullRequestSchema`, which gives every
 * record the schema's order, so that equal records give equal text.
 */
export function serializePullRequest(pr: PullRequest): SerializedPullRequest {
  const { diff, ...rest } = pr;
  const json = JSON.stringify(rest);
  const contentHash = createHash('sha256').update(json).update('\0').update(diff).digest('hex');
  return { json, contentHash };
}

/** Content hash of a pull request record, diff included (see `serializePullRequest`). */
export function pullRequestHash(pr: PullRequest): string {
  return serializePullRequest(pr).contentHash;
}

/**
 * Stores a collected pull request. Idempotent: an identical record writes nothing. Returns
 * whether a row was written. `serialized`, when the caller has it, must be `serializePullRequest(pr)`.
 */
export function savePullRequest(db: Db, pr: PullRequest, serialized: SerializedPullRequest = serializePullRequest(pr)): boolean {
  const statement = prepared(
    db,
    `INSERT INTO pull_requests (repo, number, merged_at, base_sha, merge_sha, content_hash, record, diff)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (repo, number) DO UPDATE SET
         merged_at = excluded.merged_at, base_sha = excluded.base_sha, merge_sha = excluded.merge_sha,
         content_hash = excluded.content_hash, record = excluded.record, diff = excluded.diff
       WHERE pull_requests.content_hash <> excluded.content_hash`,
  );
  const info = statement.run(pr.repo, pr.number, pr.mergedAt, pr.baseSha, pr.mergeSha, serialized.contentHash, serialized.json, pr.diff);
  return info.changes > 0;
}

export function loadPullRequest(db: Db, repo: string, number: number): PullRequest | undefined {
  const row = prepared<[string, number], { record: string; diff: string }>(
    db,
    'SELECT record, diff FROM pull_requests WHERE repo = ? AND number = ?',
  ).get(repo, number);
  if (!row) return undefined;
  return pullRequestSchema.parse({ ...JSON.parse(row.record), diff: row.diff });
}

const recordWithoutDiff = pullRequestSchema.omit({ diff: true });

/** A stored pull request without its diff, and the diff's size in UTF-8 bytes: for rules that need only the size. */
export function loadPullRequestSummary(
  db: Db,
  repo: string,
  number: number,
): { record: Omit<PullRequest, 'diff'>; diffBytes: number } | undefined {
  const row = prepared<[string, number], { record: string; diff_bytes: number }>(
    db,
    // octet_length reads the size from the record header, not the diff itself.
    'SELECT record, octet_length(diff) AS diff_bytes FROM pull_requests WHERE repo = ? AND number = ?',
  ).get(repo, number);
  if (!row) return undefined;
  return { record: recordWithoutDiff.parse(JSON.parse(row.record)), diffBytes: row.diff_bytes };
}

/**
 * Numbers further apart than this are read by separate range scans: a scan reads every stored
 * pull request of the range, wanted or not, and one far-off number should not pull in thousands.
 */
const RANGE_GAP = 500;

/** A stored pull request without its diff, not parsed yet (`summaryOf` reads it), and its diff's size. */
export interface StoredSummary {
  readonly json: string;
  readonly diffBytes: number;
}

/** The record of a `StoredSummary`, validated. */
export function summaryOf(stored: StoredSummary): { record: Omit<PullRequest, 'diff'>; diffBytes: number } {
  return { record: recordWithoutDiff.parse(JSON.parse(stored.json)), diffBytes: stored.diffBytes };
}

/**
 * Stored pull requests of one repository without their diffs (as `loadPullRequestSummary`), read
 * in ordered range scans of the table's primary key rather than one lookup each: on 30,000 stored
 * pull requests a scan reads them about seven times faster than point lookups do. By number;
 * numbers that are not stored are absent. Each is left as text until `summaryOf` reads it, so that
 * a caller going through many holds text, not thousands of objects, while it works on one.
 */
export function loadPullRequestSummaries(db: Db, repo: string, numbers: readonly number[]): Map<number, StoredSummary> {
  const sorted = [...new Set(numbers)].sort((a, b) => a - b);
  const wanted = new Set(sorted);
  const out = new Map<number, StoredSummary>();
  const scan = prepared<[string, number, number], { number: number; record: string; diff_bytes: number }>(
    db,
    'SELECT number, record, octet_length(diff) AS diff_bytes FROM pull_requests WHERE repo = ? AND number BETWEEN ? AND ? ORDER BY number',
  );
  let i = 0;
  while (i < sorted.length) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1]! - sorted[j]! <= RANGE_GAP) j += 1;
    for (const row of scan.all(repo, sorted[i]!, sorted[j]!)) {
      if (wanted.has(row.number)) out.set(row.number, { json: row.record, diffBytes: row.diff_bytes });
    }
    i = j + 1;
  }
  return out;
}

/** The diff of a stored pull request. */
export function loadDiff(db: Db, repo: string, number: number): string | undefined {
  return prepared<[string, number], { diff: string }>(db, 'SELECT diff FROM pull_requests WHERE repo = ? AND number = ?').get(repo, number)
    ?.diff;
}

export function pullRequestContentHash(db: Db, repo: string, number: number): string | undefined {
  return prepared<[string, number], { content_hash: string }>(
    db,
    'SELECT content_hash FROM pull_requests WHERE repo = ? AND number = ?',
  ).get(repo, number)?.content_hash;
}
