-- The lock of each verified build attempt (pipeline/services/environments/lock.ts): JSON
-- {python, cutoff, upstream, distributions: [{name, version, source, filename, sha256}], build: [...]},
-- the exact distributions the verified image holds and, for those the package index time machine
-- served, the file and its SHA-256. Null for an attempt that did not verify, or that predates locks.
ALTER TABLE build_attempts ADD COLUMN lock TEXT;
