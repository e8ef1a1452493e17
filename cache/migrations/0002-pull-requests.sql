-- Collected pull requests: the full record (stages/collect/pull-request.ts) and its diff.

CREATE TABLE pull_requests (
  repo         TEXT    NOT NULL,
  number       INTEGER NOT NULL,
  merged_at    TEXT    NOT NULL,
  base_sha     TEXT    NOT NULL,
  merge_sha    TEXT    NOT NULL,
  content_hash TEXT    NOT NULL,  -- hash of the whole record, diff included
  record       TEXT    NOT NULL,  -- JSON of the record without its diff
  diff         TEXT    NOT NULL,
  PRIMARY KEY (repo, number)
) WITHOUT ROWID;
CREATE INDEX pull_requests_merged ON pull_requests (repo, merged_at);
