-- LLM answers cached so that nothing is paid for twice, and every request accounted for.

CREATE TABLE llm_cache (
  key               TEXT    NOT NULL PRIMARY KEY,  -- sha256 of (kind, prompt file hash, inputs or conversation, model, schema)
  kind              TEXT    NOT NULL CHECK (kind IN ('structured', 'agent-turn')),
  prompt            TEXT    NOT NULL,              -- prompt name (prompts/<name>.md)
  model             TEXT    NOT NULL,
  response          TEXT    NOT NULL,              -- JSON: the accepted answer, or the assistant message of an agent turn
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  cost_usd          REAL    NOT NULL,              -- what producing it cost (repairs included)
  created_at        TEXT    NOT NULL
) WITHOUT ROWID;
CREATE INDEX llm_cache_prompt ON llm_cache (prompt, model);

CREATE TABLE llm_calls (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id            INTEGER,
  item              TEXT,                          -- the item that asked (owner/name#N, owner/name@sha), when known
  prompt            TEXT    NOT NULL,
  model             TEXT    NOT NULL,
  purpose           TEXT    NOT NULL,              -- answer | repair | agent-turn | agent-final
  outcome           TEXT    NOT NULL,              -- ok | malformed | refused | empty | rate-limited | timeout | server-error | ...
  http_status       INTEGER,
  prompt_tokens     INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd          REAL    NOT NULL DEFAULT 0,
  duration_ms       INTEGER NOT NULL,
  cache_key         TEXT,
  created_at        TEXT    NOT NULL
);
CREATE INDEX llm_calls_run ON llm_calls (run_id);
CREATE INDEX llm_calls_item ON llm_calls (item);
