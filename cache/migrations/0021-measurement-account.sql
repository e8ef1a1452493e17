-- The account of each measurement (issue 37): where the wall time of a candidate's measurement
-- with the harness (engine perfmine) went, per workload and side: setup (asv's setup, teardown and
-- setup_cache), warm-up, the timed samples and the overhead around them (pipes, messages, waiting),
-- and for the measurement the worker processes (starts, the suite's imports, restarts), workload
-- selection and the driver's own time; the parts sum to the measurement's wall time
-- (pipeline/concepts/measurement-account.ts). Shown by `perfmine status --stage validate --items`
-- and the report. Added columns only: applied once (schema_migrations), old rows keep null.

ALTER TABLE validations ADD COLUMN account TEXT;       -- JSON: the measurement's account; null: engine asv, or validated before this migration
ALTER TABLE harness_batches ADD COLUMN account TEXT;   -- JSON: the workload's side's account {setupMs, warmupMs, samplesMs, overheadMs, batches, failedMs}; null before this migration
