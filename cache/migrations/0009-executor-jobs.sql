-- The Slurm executor's jobs: one row per submission of an item (an attempt). The coordinator
-- writes the row before it calls sbatch (job_id still null, job_name unique), so that after its
-- own crash it finds the job again by id, or by name when the crash fell between sbatch and
-- recording the id, instead of submitting the item twice.

CREATE TABLE executor_jobs (
  stage         TEXT    NOT NULL,
  key           TEXT    NOT NULL,
  input_hash    TEXT    NOT NULL,
  attempt       INTEGER NOT NULL,   -- 1, 2, ... per (stage, key, input_hash)
  job_name      TEXT    NOT NULL UNIQUE,   -- sbatch --job-name; also the job's spool directory
  job_id        TEXT,               -- Slurm's id; null between recording and sbatch answering
  state         TEXT    NOT NULL,   -- submitting | submitted | ingested | lost | failed | cancelled
  slurm_state   TEXT,               -- last state seen in squeue/sacct (PENDING, RUNNING, TIMEOUT ...)
  reason        TEXT,               -- why lost/failed/cancelled
  run_id        INTEGER,
  submitted_at  TEXT    NOT NULL,
  updated_at    TEXT    NOT NULL,
  PRIMARY KEY (stage, key, input_hash, attempt)
);
CREATE INDEX executor_jobs_open ON executor_jobs (state) WHERE state IN ('submitting', 'submitted');
