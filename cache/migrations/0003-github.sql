-- GitHub HTTP cache (ETag / Last-Modified), discovered repositories, asv config lookups.

-- One row per GET that GitHub answered with a validator: the next identical request is sent
-- conditionally, and a 304 (which costs no rate limit) is answered from this row.
CREATE TABLE http_cache (
  key           TEXT    PRIMARY KEY,   -- method + Accept + URL (never a credential)
  url           TEXT    NOT NULL,
  etag          TEXT,
  last_modified TEXT,
  status        INTEGER NOT NULL,
  headers       TEXT    NOT NULL,      -- JSON of the response headers worth replaying (content-type, link, ...)
  body          BLOB    NOT NULL,
  stored_at     TEXT    NOT NULL,
  validated_at  TEXT    NOT NULL       -- when a 200 last stored it (a 304 writes nothing)
) WITHOUT ROWID;

-- Repositories found by discover, enriched through the GitHub API (or read from a local clone).
CREATE TABLE repositories (
  name            TEXT    PRIMARY KEY,  -- canonical owner/name (after a rename)
  github_id       INTEGER,
  source          TEXT    NOT NULL CHECK (source IN ('github', 'git')),
  local_path      TEXT,                 -- the clone, for source = 'git'
  stars           INTEGER,
  forks           INTEGER,
  is_fork         INTEGER NOT NULL DEFAULT 0,
  archived        INTEGER NOT NULL DEFAULT 0,
  disabled        INTEGER NOT NULL DEFAULT 0,
  default_branch  TEXT    NOT NULL,
  pushed_at       TEXT,
  asv_config_path TEXT,
  python_requires TEXT,                 -- what was read: requires-python or classifiers
  verdict         TEXT    NOT NULL,     -- 'kept' or the drop reason
  updated_at      TEXT    NOT NULL
) WITHOUT ROWID;

-- Former names of renamed repositories (GitHub answers them with a 301).
CREATE TABLE repository_aliases (
  alias TEXT PRIMARY KEY,               -- the old owner/name
  name  TEXT NOT NULL                   -- the canonical owner/name
) WITHOUT ROWID;

-- The asv config at a commit: path and raw text, or no row content when there is none.
CREATE TABLE asv_configs (
  repo       TEXT NOT NULL,
  sha        TEXT NOT NULL,
  path       TEXT,                      -- NULL: no asv.conf.json(c) anywhere in the tree
  text       TEXT,
  checked_at TEXT NOT NULL,
  PRIMARY KEY (repo, sha)
) WITHOUT ROWID;
