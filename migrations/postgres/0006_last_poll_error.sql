-- Why the last status poll of a job failed (at, message, url without credentials, code, status);
-- NULL when it did not. Shown by the API, `finality jobs show` and the dashboard.
ALTER TABLE jobs ADD COLUMN last_poll_error jsonb;
