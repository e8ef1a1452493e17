-- Fingerprints recorded before this version are dropped, to be taken again: under Python 3.12 and
-- later (sys.monitoring) the harness's DISABLE of an event outlived the fingerprint that set it, so
-- a worker's second and later fingerprints missed every function an earlier one had run (a
-- workload running a changed helper could go unselected). The store cannot tell which Python
-- recorded a row, so every row goes; the next candidate of each repository takes them again.

DELETE FROM fingerprints;
