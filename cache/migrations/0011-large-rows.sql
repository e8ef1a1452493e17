-- The tables of large rows become rowid tables: collected pull requests (the record and its diff,
-- a few KB each), cached GitHub response bodies and LLM answers. SQLite keeps the rows of a
-- WITHOUT ROWID table in an index b-tree, whose pages hold at most about a quarter of a page of a
-- row (1 KB of 4 KB) before the rest goes to overflow pages: a collect of 2,433 pull requests
-- wrote 3,625 pages of pull_requests, and 2,826 in a rowid table (its rows in the table's own
-- b-tree, the key in a small index). Same columns, keys, upserts and indexes; rows copied as they are.

CREATE TABLE pull_requests_rowid (
  repo         TEXT    NOT NULL,
  number       INTEGER NOT NULL,
  merged_at    TEXT    NOT NULL,
  base_sha     TEXT    NOT NULL,
  merge_sha    TEXT    NOT NULL,
  content_hash TEXT    NOT NULL,  -- hash of the whole record, diff included
  record       TEXT    NOT NULL,  -- JSON of the record without its diff
  diff         TEXT    NOT NULL,
  PRIMARY KEY (repo, number)
);
INSERT INTO pull_requests_rowid (repo, number, merged_at, base_sha, merge_sha, content_hash, record, diff)
  SELECT repo, number, merged_at, base_sha, merge_sha, content_hash, record, diff FROM pull_requests ORDER BY repo, number;
DROP TABLE pull_requests;
ALTER TABLE pull_requests_rowid RENAME TO pull_requests;
CREATE INDEX pull_requests_merged ON pull_requests (repo, merged_at);

CREATE TABLE http_cache_rowid (
  key           TEXT    PRIMARY KEY,   -- method + Accept + URL (never a credential)
  url           TEXT    NOT NULL,
  etag          TEXT,
  last_modified TEXT,
  status        INTEGER NOT NULL,
  headers       TEXT    NOT NULL,      -- JSON of the response headers worth replaying (content-type, link, ...)
  body          BLOB    NOT NULL,
  stored_at     TEXT    NOT NULL,
  validated_at  TEXT    NOT NULL       -- when a 200 last stored it (a 304 writes nothing)
);
INSERT INTO http_cache_rowid (key, url, etag, last_modified, status, headers, body, stored_at, validated_at)
  SELECT key, url, etag, last_modified, status, headers, body, stored_at, validated_at FROM http_cache ORDER BY key;
DROP TABLE http_cache;
ALTER TABLE http_cache_rowid RENAME TO http_cache;

CREATE TABLE llm_cache_rowid (
  key               TEXT    NOT NULL PRIMARY KEY,  -- sha256 of (kind, prompt file hash, inputs or conversation, model, schema)
  kind              TEXT    NOT NULL CHECK (kind IN ('structured', 'agent-turn')),
  prompt            TEXT    NOT NULL,              -- prompt name (prompts/<name>.md)
  model             TEXT    NOT NULL,
  response          TEXT    NOT NULL,              -- JSON: the accepted answer, or the assistant message of an agent turn
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  cost_usd          REAL    NOT NULL,              -- what producing it cost (repairs included)
  created_at        TEXT    NOT NULL
);
INSERT INTO llm_cache_rowid (key, kind, prompt, model, response, prompt_tokens, completion_tokens, cost_usd, created_at)
  SELECT key, kind, prompt, model, response, prompt_tokens, completion_tokens, cost_usd, created_at FROM llm_cache ORDER BY key;
DROP TABLE llm_cache;
ALTER TABLE llm_cache_rowid RENAME TO llm_cache;
CREATE INDEX llm_cache_prompt ON llm_cache (prompt, model);
