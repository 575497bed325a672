-- Indexes for the dashboard's overview and the CLI (store/overview-reads.ts): every count and
-- chart reads one index up to a cap or over a recent window, never the whole table.

-- Flagged jobs only: partial, so a job that is never flagged costs nothing here.
CREATE INDEX jobs_conflict ON jobs (job_no) WHERE conflict = 1;
CREATE INDEX jobs_anomaly ON jobs (job_no) WHERE anomaly IS NOT NULL;
-- Settlements per minute and per source over a recent window: a range scan of what settled then.
-- Written once per job (when it settles); open jobs have no entry. Covers settled_by, so the
-- chart reads the index only.
CREATE INDEX jobs_settled_by_source ON jobs (settled_at, settled_by) WHERE settled_at IS NOT NULL;
