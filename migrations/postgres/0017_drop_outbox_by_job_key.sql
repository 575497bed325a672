-- The outbox's UNIQUE (provider, job_id, name, trigger) already orders its rows by (provider,
-- job_id): every query that finds a job's effects (retention's NOT EXISTS, the latency and
-- lifecycle joins) is served by its prefix. outbox_by_job_key, added in 0004 on (provider,
-- job_id), only cost each effect's insert and every update that moves a row to a new tuple
-- (issue 29). SQLite drops its copy in its migration 0013.
DROP INDEX IF EXISTS outbox_by_job_key;
