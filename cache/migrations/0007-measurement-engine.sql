-- validate's measurement engines (perfmine's interleaved harness beside asv) and the per-workload
-- verdict: each workload's own noise, p-value and minimum detectable speedup; the harness's samples.

ALTER TABLE validations ADD COLUMN engine TEXT NOT NULL DEFAULT 'asv';   -- 'perfmine' (the harness) or 'asv'
ALTER TABLE validations ADD COLUMN protocol TEXT;                        -- JSON: the engine's protocol (rounds, batch size, mode, cpus, seed)
ALTER TABLE validations ADD COLUMN bias_log REAL;                        -- calibration's bias allowance (log); spread_log is left null
ALTER TABLE validations ADD COLUMN mds_median REAL;                      -- median over the workloads of their minimum detectable speedup

ALTER TABLE workload_verdicts ADD COLUMN noise REAL;                     -- moderated standard deviation of one pair's log ratio
ALTER TABLE workload_verdicts ADD COLUMN p_value REAL;                   -- two-sided, before Holm's step
ALTER TABLE workload_verdicts ADD COLUMN significant INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workload_verdicts ADD COLUMN mds REAL;                       -- minimum detectable speedup
ALTER TABLE workload_verdicts ADD COLUMN settled TEXT;                   -- harness, adaptive sampling: JSON {round, as: changed|unchanged} when it stopped early

-- The harness's measurements: per workload and side, the samples of every round's batch.
CREATE TABLE harness_batches (
  key       TEXT    NOT NULL REFERENCES validations (key) ON DELETE CASCADE,
  workload  TEXT    NOT NULL,
  side      TEXT    NOT NULL CHECK (side IN ('base', 'expert', 'calibration')),
  number    INTEGER,                                 -- calls per sample (asv's number)
  samples   TEXT    NOT NULL,                        -- JSON: per round, the batch's samples (seconds per call), null where none
  failure   TEXT,                                    -- JSON {status, message, round} of the batch that stopped it, or null
  PRIMARY KEY (key, workload, side)
) WITHOUT ROWID;
