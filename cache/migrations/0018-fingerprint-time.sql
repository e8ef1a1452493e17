-- How long each workload's fingerprint took at the base (its setup and one call under Python's
-- call tracing): validate chooses its controls among workloads no slower than the ones it
-- measures (networkx's five hash-chosen controls cost about 90 s a round next to one selected
-- workload of a few seconds).

ALTER TABLE fingerprints ADD COLUMN ms INTEGER;   -- null: recorded before this migration
