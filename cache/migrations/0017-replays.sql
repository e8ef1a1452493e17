-- perfmine replay (issue 30): each replay of an emitted task, rebuilt from its folder alone and
-- measured again (pipeline/concepts/records/replay-record.ts). Replays made here and replays read
-- from task folders (`replays/<id>.json`, made on other machines or against other stores) are kept
-- alike; a replay is one row whatever how many times it is seen (its id).

CREATE TABLE replays (
  id             TEXT    PRIMARY KEY,   -- the record's uuid
  instance_id    TEXT    NOT NULL,      -- the task (owner__name-N)
  task_key       TEXT    NOT NULL,      -- owner/name#N
  folder_digest  TEXT    NOT NULL,      -- the replayed folder's digest (pipeline/concepts/replay-files.ts)
  verdict        TEXT    NOT NULL CHECK (verdict IN ('replicates', 'does-not-replicate', 'inconclusive', 'failed')),
  replayed_at    TEXT    NOT NULL,
  machine_ms     INTEGER NOT NULL,      -- the machine time this replay cost (builds unless reused, scan, probe, measurement)
  record         TEXT    NOT NULL,      -- JSON: the whole record
  origin         TEXT    NOT NULL CHECK (origin IN ('replayed', 'imported')),  -- made by this store's perfmine replay, or read from a folder
  stored_at      TEXT    NOT NULL
) WITHOUT ROWID;

CREATE INDEX replays_by_task ON replays (instance_id, replayed_at);
