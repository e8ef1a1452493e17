-- Binary files of task folders that do not fit a ledger output's JSON (the sealed history of a
-- task's repository: source/repo.bundle and its modules' bundles), stored once by their SHA-256.
-- Written by emit before the item's outcome (a crash leaves at most an unreferenced blob, which
-- the next emit of the same history reuses); read when a month is written or published.

CREATE TABLE blobs (
  sha256     TEXT    PRIMARY KEY,
  size       INTEGER NOT NULL,
  data       BLOB    NOT NULL,
  created_at TEXT    NOT NULL
);
