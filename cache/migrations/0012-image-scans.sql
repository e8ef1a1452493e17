-- The outside scan of environment images (pipeline/services/environments/image-scan.ts).
--
-- image_inventories: what a base image holds, read once per image id from its export (a container
-- created, never started): every path with its type, mode, size, time and SHA-256 (or link
-- target), the text of the few small files the scan's rules read (dpkg's records, .pth files,
-- the dynamic linker's configuration), and the image's configured environment. A scanned image is
-- compared with it, so that later runs and Slurm workers need not export the base again. A cache:
-- rows are upserted, and a row of another `format` is read as missing.
CREATE TABLE image_inventories (
  image_id    TEXT    PRIMARY KEY,     -- sha256:... (the engine's image id, not a tag)
  format      INTEGER NOT NULL,        -- encoding of `inventory` (cache/image-inventories.ts)
  inventory   TEXT    NOT NULL,        -- base64 of gzip of JSON: {env, entries: [[path, type, mode, size, mtime, sha256 | target]], texts, cut}
  files       INTEGER NOT NULL,        -- entries read from the export
  bytes       INTEGER NOT NULL,        -- content bytes read (and hashed)
  duration_ms INTEGER NOT NULL,        -- export and read, once
  created_at  TEXT    NOT NULL
);

-- The scan's verdict with each build attempt that was scanned: JSON
-- {verdict: accepted | tampered, findings: [{rule, path, detail}], durationMs, filesRead, bytesRead};
-- null when the attempt was not scanned (it failed before, or predates the scan).
ALTER TABLE build_attempts ADD COLUMN scan TEXT;
