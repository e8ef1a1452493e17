-- Build-script attempts of the synthesize stage: every script tried for a commit, where it came
-- from, how it ended, its logs' tails, and what is needed to rebuild the environment from it.

CREATE TABLE build_attempts (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  repo              TEXT    NOT NULL,                 -- owner/name
  sha               TEXT    NOT NULL,                 -- the commit built
  commit_date       TEXT    NOT NULL,                 -- its committer date (ISO 8601 UTC)
  script            TEXT    NOT NULL,                 -- docker_build.sh as run
  script_hash       TEXT    NOT NULL,                 -- sha256 of the normalized script
  source            TEXT    NOT NULL CHECK (source IN ('cache', 'neighbour', 'template', 'agent')),
  source_detail     TEXT,                             -- neighbour sha, template name, agent model and round
  outcome           TEXT    NOT NULL CHECK (outcome IN ('verified', 'failed', 'rejected')),
  failing_step      TEXT,                             -- script | checkout | build | tamper | import | asv | pytest
  failure_kind      TEXT,                             -- timeout, missing-header, tampered, ...
  failure           TEXT,                             -- one line: what went wrong
  stdout_tail       TEXT    NOT NULL DEFAULT '',      -- of the failing step (of the build when verified)
  stderr_tail       TEXT    NOT NULL DEFAULT '',
  steps             TEXT    NOT NULL DEFAULT '[]',    -- JSON: [{step, ok, exitCode, timedOut, durationMs}]
  duration_ms       INTEGER NOT NULL,
  llm_calls         INTEGER NOT NULL DEFAULT 0,
  prompt_tokens     INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd          REAL    NOT NULL DEFAULT 0,
  model             TEXT,
  base_image        TEXT    NOT NULL,                 -- the configured base image (tag)
  toolchain_image   TEXT    NOT NULL,                 -- base image, or base + asv wheelhouse
  repo_image        TEXT    NOT NULL,                 -- the clone tier
  clone_source      TEXT    NOT NULL,                 -- git:PATH or https://github.com/owner/name.git
  asv_config_path   TEXT,
  import_name       TEXT,
  python_version    TEXT,
  image_tag         TEXT,                             -- the verified environment's image
  run_id            INTEGER,
  created_at        TEXT    NOT NULL
);
CREATE INDEX build_attempts_commit ON build_attempts (repo, sha, id);
CREATE INDEX build_attempts_verified ON build_attempts (repo, outcome, commit_date);
