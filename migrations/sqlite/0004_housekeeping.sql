-- Retention: each pruning pass walks the oldest rows first through these indexes, so a pass
-- costs what it deletes, not what is stored.
CREATE INDEX jobs_settled ON jobs (settled_at) WHERE settled_at IS NOT NULL;
CREATE INDEX outbox_delivered ON outbox (delivered_at) WHERE status = 'delivered';
CREATE INDEX outbox_by_job ON outbox (provider, job_id);
CREATE INDEX runs_settled ON runs (settled_at) WHERE settled_at IS NOT NULL;
