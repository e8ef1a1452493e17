-- Runs of the CLI and the stage ledger: what every stage decided about every item.

CREATE TABLE runs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  command      TEXT    NOT NULL,                 -- 'run', 'stage collect', ...
  args         TEXT    NOT NULL,                 -- JSON of the resolved scope (never a credential)
  window_label TEXT,
  pid          INTEGER NOT NULL,
  host         TEXT    NOT NULL,
  started_at   TEXT    NOT NULL,
  finished_at  TEXT,
  status       TEXT    NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'interrupted', 'crashed')),
  exit_code    INTEGER,
  summary      TEXT                              -- JSON: per-stage counts, metrics
);
CREATE INDEX runs_status ON runs (status);

CREATE TABLE stage_items (
  stage         TEXT    NOT NULL,
  key           TEXT    NOT NULL,                -- owner/name, owner/name#N, owner/name@sha
  repo          TEXT,                            -- owner/name, for --repo filters
  at            TEXT,                            -- ISO instant the item belongs to (merged_at), for windows
  status        TEXT    NOT NULL CHECK (status IN ('pending', 'done', 'dropped', 'failed')),
  reason        TEXT,                            -- drop or failure reason code
  detail        TEXT,                            -- a human sentence about the decision
  error_kind    TEXT,                            -- for failures: outside-service | item | config | internal
  last_error    TEXT,
  attempts      INTEGER NOT NULL DEFAULT 0,
  input_hash    TEXT    NOT NULL,
  stage_version INTEGER NOT NULL,
  output        TEXT,                            -- JSON handed to the next stage
  run_id        INTEGER,
  updated_at    TEXT    NOT NULL,
  PRIMARY KEY (stage, key)
) WITHOUT ROWID;
CREATE INDEX stage_items_status ON stage_items (stage, status);
CREATE INDEX stage_items_at ON stage_items (stage, at);
CREATE INDEX stage_items_repo ON stage_items (stage, repo);
