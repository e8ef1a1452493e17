-- Project pages of package indexes, as the index time machine (pipeline/services/package-index/)
-- fetched them from its upstream (PyPI or any PEP 503/691 index). The next request for the same
-- page is sent conditionally (If-None-Match / If-Modified-Since) and a 304 is answered from the
-- row. A row is written only after a complete answer that parsed as a simple-index page; the raw
-- body is kept (with its content type) and parsed again on use, so that the cutoff of each build
-- is applied to the same upstream answer.
CREATE TABLE index_pages (
  url           TEXT    PRIMARY KEY,   -- the upstream project page (normalized name, trailing slash)
  etag          TEXT,
  last_modified TEXT,
  content_type  TEXT    NOT NULL,      -- application/vnd.pypi.simple.v1+json, text/html, ...
  body          BLOB    NOT NULL,
  stored_at     TEXT    NOT NULL       -- when a 200 last stored it (a 304 writes nothing)
);
