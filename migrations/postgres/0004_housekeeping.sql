-- Retention: each pruning pass walks the oldest rows first through these indexes, so a pass
-- costs what it deletes, not what is stored.
CREATE INDEX jobs_settled ON jobs (settled_at) WHERE settled_at IS NOT NULL;
CREATE INDEX outbox_delivered ON outbox (delivered_at) WHERE status = 'delivered';
CREATE INDEX outbox_by_job_key ON outbox (provider, job_id);
CREATE INDEX runs_settled ON runs (settled_at) WHERE settled_at IS NOT NULL;
-- Queue-like tables churn: vacuum them sooner than the default 20% of dead rows, so that claims
-- (FOR UPDATE SKIP LOCKED) do not wade through dead tuples.
ALTER TABLE outbox SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);
ALTER TABLE deliveries SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);
ALTER TABLE jobs SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 1000);
ALTER TABLE attempts SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);
