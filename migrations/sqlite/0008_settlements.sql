-- The settlement feed (store/settlement-feed.ts): one row per job settlement, its first terminal
-- state, written by these triggers in the transaction that settles the job, so that no write path
-- can settle a job without a row. SQLite has one writer, so settlement_no is commit order: the
-- cursor a consumer keeps never passes a settlement that commits later. AUTOINCREMENT: a number
-- is never used twice, even after the newest rows were deleted.
CREATE TABLE settlements (
  settlement_no INTEGER PRIMARY KEY AUTOINCREMENT,
  provider      TEXT NOT NULL,
  job_id        TEXT NOT NULL,
  kind          TEXT,
  state         TEXT NOT NULL,
  settled_at    INTEGER NOT NULL,
  settled_by    TEXT
);
CREATE INDEX settlements_by_provider ON settlements (provider, settlement_no);
CREATE INDEX settlements_by_kind ON settlements (kind, settlement_no) WHERE kind IS NOT NULL;
-- Retention (retention.settlementsDays) prunes the oldest settlements first.
CREATE INDEX settlements_by_settled ON settlements (settled_at);

-- Jobs settled before this migration, oldest settlement first.
INSERT INTO settlements (provider, job_id, kind, state, settled_at, settled_by)
  SELECT provider, id, kind, state, settled_at, settled_by FROM jobs
  WHERE settled_at IS NOT NULL ORDER BY settled_at, job_no;

CREATE TRIGGER jobs_settled_insert AFTER INSERT ON jobs WHEN NEW.settled_at IS NOT NULL BEGIN
  INSERT INTO settlements (provider, job_id, kind, state, settled_at, settled_by)
    VALUES (NEW.provider, NEW.id, NEW.kind, NEW.state, NEW.settled_at, NEW.settled_by);
END;

CREATE TRIGGER jobs_settled_update AFTER UPDATE OF settled_at ON jobs
  WHEN OLD.settled_at IS NULL AND NEW.settled_at IS NOT NULL BEGIN
  INSERT INTO settlements (provider, job_id, kind, state, settled_at, settled_by)
    VALUES (NEW.provider, NEW.id, NEW.kind, NEW.state, NEW.settled_at, NEW.settled_by);
END;
