-- Two indexes that only cost writes (issue 29). SQLite drops its copies in its migration 0014.
--
-- The outbox's idempotency key is a digest of (provider, job_id, name, trigger)
-- (engine/effect-definitions.ts), which UNIQUE (provider, job_id, name, trigger) already keeps
-- unique, and no query finds a row by it: its own unique index put each enqueue on a random leaf.
ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_idempotency_key_key;

-- jobs_settled (settled_at), added in 0004 for retention, is the prefix of jobs_settled_by_source
-- (settled_at, settled_by) from 0003, with the same WHERE: every read it served (retention's oldest
-- first, the latency samples newest first) is served by the other, and each settling update paid
-- for both.
DROP INDEX IF EXISTS jobs_settled;
