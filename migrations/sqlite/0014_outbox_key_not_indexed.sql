-- Two indexes that only cost writes (issue 29; bench/sqlite-wal-pages.js counts the pages).
--
-- The outbox's idempotency key is a digest of (provider, job_id, name, trigger)
-- (engine/effect-definitions.ts), which UNIQUE (provider, job_id, name, trigger) already keeps
-- unique, and no query finds a row by it. Its own UNIQUE index put each enqueue on a random leaf:
-- ~4 of a group commit's ~37 pages with one effect in three webhooks. SQLite cannot drop a
-- column's UNIQUE, so the table is rebuilt with the same rows, indexes and triggers. DROP TABLE
-- fires no trigger, so row_counts keeps its outbox counts; no foreign key refers to the outbox.
CREATE TABLE outbox_rebuilt (
  effect_no       INTEGER PRIMARY KEY,
  id              TEXT NOT NULL UNIQUE,
  provider        TEXT NOT NULL,
  job_id          TEXT NOT NULL,
  name            TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  trigger         TEXT NOT NULL,
  status          TEXT NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  lease_until     INTEGER,
  last_error      TEXT,
  created_at      INTEGER NOT NULL,
  delivered_at    INTEGER,
  trace_parent    TEXT,
  -- One row per effect and trigger: a job settles once, and is alerted as stuck at most once.
  UNIQUE (provider, job_id, name, trigger)
);
INSERT INTO outbox_rebuilt (effect_no, id, provider, job_id, name, idempotency_key, trigger, status,
    attempts, next_attempt_at, lease_until, last_error, created_at, delivered_at, trace_parent)
  SELECT effect_no, id, provider, job_id, name, idempotency_key, trigger, status,
    attempts, next_attempt_at, lease_until, last_error, created_at, delivered_at, trace_parent
  FROM outbox;
DROP TABLE outbox;
ALTER TABLE outbox_rebuilt RENAME TO outbox;

CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX outbox_leased ON outbox (lease_until) WHERE status = 'delivering';
CREATE INDEX outbox_by_status ON outbox (status, effect_no);
CREATE INDEX outbox_delivered ON outbox (delivered_at) WHERE status = 'delivered';

CREATE TRIGGER outbox_counted_insert AFTER INSERT ON outbox BEGIN
  INSERT INTO row_counts (tbl, key, n) VALUES ('outbox', NEW.status, 1)
    ON CONFLICT (tbl, key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER outbox_counted_update AFTER UPDATE OF status ON outbox WHEN OLD.status IS NOT NEW.status BEGIN
  UPDATE row_counts SET n = n - 1 WHERE tbl = 'outbox' AND key = OLD.status;
  INSERT INTO row_counts (tbl, key, n) VALUES ('outbox', NEW.status, 1)
    ON CONFLICT (tbl, key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER outbox_counted_delete AFTER DELETE ON outbox BEGIN
  UPDATE row_counts SET n = n - 1 WHERE tbl = 'outbox' AND key = OLD.status;
END;

-- jobs_settled (settled_at), added in 0004 for retention, is the prefix of jobs_settled_by_source
-- (settled_at, settled_by) from 0003, with the same WHERE: every read it served (retention's oldest
-- first, the latency samples newest first) is served by the other, and each settling update paid
-- for both.
DROP INDEX IF EXISTS jobs_settled;
