-- Fingerprints that failed at a base commit (issue 37): a workload whose setup or call raised, that
-- skipped (NotImplementedError in setup, SkipNotImplemented), or that ran past its timeout. Before
-- this table every candidate of the same base commit took them again (xarray #10370: 1,048 s of
-- fingerprints). A failure that says nothing of the workload (the worker died, the run was
-- stopped, the engine failed) is never recorded.
--
-- `environment` is a digest of everything the result can depend on besides the commit: the base
-- image's id in the engine (a rebuilt environment has another, so its failures are taken again),
-- the containers' limits, the harness's files, the interpreter, the containers' variables and
-- network, PYTHONHASHSEED, the benchmark filter and the suite the harness discovered.
CREATE TABLE fingerprint_failures (
  repo          TEXT    NOT NULL,
  sha           TEXT    NOT NULL,   -- the base commit it was taken at
  environment   TEXT    NOT NULL,   -- sha256 (hex) of what else the result depends on (above)
  workload      TEXT    NOT NULL,
  status        TEXT    NOT NULL CHECK (status IN ('skipped', 'failed', 'timeout')),
  message       TEXT    NOT NULL,   -- the harness's answer (first 2,000 characters)
  timeout_s     REAL,               -- the time limit it was taken under (seconds); a timeout is taken again under a larger one
  ms            INTEGER,            -- how long taking it took, in milliseconds
  recorded_at   TEXT    NOT NULL,
  PRIMARY KEY (repo, sha, environment, workload)
) WITHOUT ROWID;
