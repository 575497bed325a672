-- When a status poll last asked the provider about the job (epoch milliseconds); NULL until the
-- first. With poll_attempts and next_check_at it tells an operator the poller is alive for this
-- job. Shown by the API, `finality jobs show` and the dashboard.
ALTER TABLE jobs ADD COLUMN last_polled_at INTEGER;
