-- The outbox's UNIQUE (provider, job_id, name, trigger) already orders its rows by (provider,
-- job_id): every query that finds a job's effects (retention's NOT EXISTS, the latency and
-- lifecycle joins) is served by its prefix. The second index on (provider, job_id), added in
-- 0004, only cost each effect's insert and status change (~2,800 instructions a webhook with one
-- effect in three; bench/sqlite-schema-cost.js, issue 29).
DROP INDEX IF EXISTS outbox_by_job;
