-- perfmine score: each measured side of a scored task (the expert's patch once per task, each
-- model's prediction once), so that scoring again measures nothing already finished.

CREATE TABLE score_results (
  instance_id   TEXT    NOT NULL,   -- the emitted task (owner__name-N)
  side          TEXT    NOT NULL CHECK (side IN ('expert', 'agent')),
  model         TEXT    NOT NULL,   -- model_name_or_path of the prediction; '' for the expert
  patch_sha256  TEXT    NOT NULL,   -- sha256 of the patch scored
  failure       TEXT,               -- null: every check passed; else the named failure (patch-does-not-apply, tests-regressed, ...)
  result        TEXT    NOT NULL,   -- JSON: the side's result (per-workload speedups and verdicts, tests, snapshot, protocol)
  measured_at   TEXT    NOT NULL,
  PRIMARY KEY (instance_id, side, model, patch_sha256)
) WITHOUT ROWID;
