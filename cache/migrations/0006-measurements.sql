-- validate: per candidate its decision and protocol numbers, every asv invocation's results file
-- (raw, one per invocation, never pooled), and both verdicts of every workload with their numbers.

CREATE TABLE validations (
  key                   TEXT    NOT NULL PRIMARY KEY,   -- owner/name#N
  repo                  TEXT    NOT NULL,
  number                INTEGER NOT NULL,
  base_sha              TEXT    NOT NULL,
  merge_sha             TEXT    NOT NULL,
  base_image            TEXT    NOT NULL,
  expert_image          TEXT,                           -- null when the expert did not build
  decision              TEXT    NOT NULL,               -- 'kept' or a drop reason (stages/validate/decide.ts)
  detail                TEXT    NOT NULL,
  pairs                 INTEGER NOT NULL,               -- complete base/expert pairs
  calibration_pairs     INTEGER NOT NULL,               -- complete base/base pairs
  machine_factors       TEXT    NOT NULL,               -- JSON: machine-speed factor of each base/expert pair
  calibration_factors   TEXT    NOT NULL,               -- JSON: of each base/base pair
  calibrated            INTEGER NOT NULL,               -- 0/1
  spread_log            REAL,                           -- calibration spread (quantile of |log ratio|)
  threshold             REAL,                           -- threshold factor T of the paired verdict
  fp_flagged            INTEGER,                        -- calibration false positives (leave one workload out)
  fp_compared           INTEGER,
  false_positive_rate   REAL,
  asv_calibration_flags INTEGER,                        -- what asv's pooled rule flags on the same base/base
  paired_options        TEXT    NOT NULL,               -- JSON
  tests                 TEXT,                           -- JSON summary (null when not run)
  snapshot              TEXT,                           -- JSON summary (null when not run)
  benchmarks_json       TEXT,                           -- asv's benchmarks.json of the suite
  budget_exhausted      INTEGER NOT NULL,
  validated_at          TEXT    NOT NULL
) WITHOUT ROWID;
CREATE INDEX validations_decision ON validations (decision);

CREATE TABLE invocations (
  key           TEXT    NOT NULL REFERENCES validations (key) ON DELETE CASCADE,
  seq           INTEGER NOT NULL,                       -- position in time order, from 1
  role          TEXT    NOT NULL CHECK (role IN ('base', 'expert', 'calibration-first', 'calibration-second')),
  pair          INTEGER NOT NULL,
  image         TEXT    NOT NULL CHECK (image IN ('base', 'expert')),
  status        TEXT    NOT NULL CHECK (status IN ('ok', 'asv-failed', 'timed-out', 'malformed', 'not-run')),
  asv_exit_code INTEGER,
  commit_sha    TEXT,
  results       TEXT,                                   -- the invocation's results file as asv wrote it
  log_tail      TEXT,
  duration_ms   INTEGER NOT NULL,
  PRIMARY KEY (key, seq)
) WITHOUT ROWID;

CREATE TABLE workload_verdicts (
  key               TEXT    NOT NULL REFERENCES validations (key) ON DELETE CASCADE,
  workload          TEXT    NOT NULL,                   -- asv's name: bench.Class.time_x(params)
  benchmark         TEXT    NOT NULL,
  module            TEXT    NOT NULL,
  class_name        TEXT,
  function          TEXT    NOT NULL,
  params            TEXT,
  unit              TEXT,
  base_median       REAL,                               -- pooled samples
  expert_median     REAL,
  speedup           REAL,                               -- base / expert (FormulaCode)
  asv_mark          TEXT    NOT NULL,                   -- asv compare's mark on pooled samples
  asv_change        TEXT    NOT NULL,
  asv_ratio         REAL,
  asv_tilde         INTEGER NOT NULL,
  asv_p_value       REAL,                               -- Mann-Whitney U on pooled samples
  base_samples      INTEGER NOT NULL,
  expert_samples    INTEGER NOT NULL,
  paired_change     TEXT    NOT NULL CHECK (paired_change IN ('improved', 'worsened', 'unchanged', 'incomparable')),
  paired_reason     TEXT,
  pair_ratios       TEXT    NOT NULL,                   -- JSON: expert/base per pair
  normalized_ratios TEXT    NOT NULL,                   -- JSON: divided by each pair's machine factor
  normalized_median REAL,
  usable_pairs      INTEGER NOT NULL,
  faster_pairs      INTEGER NOT NULL,
  slower_pairs      INTEGER NOT NULL,
  threshold         REAL    NOT NULL,
  PRIMARY KEY (key, workload)
) WITHOUT ROWID;
CREATE INDEX workload_verdicts_change ON workload_verdicts (paired_change);
