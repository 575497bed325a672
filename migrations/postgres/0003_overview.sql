-- Indexes for the dashboard's overview and the CLI (store/overview-reads.ts), as on SQLite:
-- every count and chart reads one index up to a cap or over a recent window.
-- Plain CREATE INDEX (migrations run in one transaction): on a large existing table this blocks
-- writes while it builds; build them first with CREATE INDEX CONCURRENTLY under these names and
-- this migration finds them there (IF NOT EXISTS).

-- Flagged jobs only: partial, so a job that is never flagged costs nothing here.
CREATE INDEX IF NOT EXISTS jobs_conflict ON jobs (job_no) WHERE conflict;
CREATE INDEX IF NOT EXISTS jobs_anomaly ON jobs (job_no) WHERE anomaly IS NOT NULL;
-- Settlements per minute and per source over a recent window; written once per job, when it
-- settles. Covers settled_by, so the chart reads the index only.
CREATE INDEX IF NOT EXISTS jobs_settled_by_source ON jobs (settled_at, settled_by) WHERE settled_at IS NOT NULL;
