-- validate's workload selection (engine perfmine): what the expert patch can affect, from each
-- workload's fingerprint (the code one call of it ran at the base commit).

ALTER TABLE validations ADD COLUMN selection TEXT;   -- JSON: {mode, reason, selected, controls, skipped, touched}; null: every workload measured without selection

-- Fingerprints per commit: reused by later candidates of the same base commit, and of later
-- commits of the same repository when none of the files a fingerprint covers changed between them.
CREATE TABLE fingerprints (
  repo          TEXT    NOT NULL,
  sha           TEXT    NOT NULL,   -- the base commit it was recorded at
  commit_date   TEXT    NOT NULL,   -- that commit's date (ISO), to find the nearest commit with fingerprints
  workload      TEXT    NOT NULL,
  version       TEXT,               -- the benchmark's version (asv's hash of its code)
  code          TEXT,               -- JSON: [[path relative to the checkout, first line, last line], ...] of the checkout's code it ran; null: fingerprinting failed
  opaque        INTEGER NOT NULL,   -- 1: its code runs out of sight (timeraw)
  recorded_at   TEXT    NOT NULL,
  PRIMARY KEY (repo, sha, workload)
) WITHOUT ROWID;
