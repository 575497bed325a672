-- The settlement feed (store/settlement-feed.ts): one row per job settlement, its first terminal
-- state, written by a trigger in the transaction that settles the job.
--
-- Commit order. A sequence value taken at insert can commit out of order: transaction A takes 5,
-- B takes 6, B commits, a reader passes 6, then A commits 5 behind the reader's cursor. So the
-- number is taken at COMMIT instead, by a deferred constraint trigger (it runs after all of the
-- transaction's other work, group commits included), under an advisory lock held until the
-- transaction ends. Whoever takes number k took the lock after the holder of k-1 ended, and
-- PostgreSQL makes a commit visible before it releases the transaction's locks: a snapshot that
-- sees k sees every number below it. The lock is the transaction's last, so it cannot close a
-- deadlock; it serialises only the commits of settling transactions, one fsync each (a group
-- commit takes it once for its whole group). A rolled-back transaction leaves a gap, never a hole
-- a reader could pass. Until its commit a row's settlement_no is NULL, seen by nobody else (and
-- only one such row per job can exist: the job's row is locked by the transaction that settles it).
-- The columns are SQLite's (test/store/postgres-store.test.ts compares them by name).
CREATE SEQUENCE settlement_numbers;

CREATE TABLE settlements (
  settlement_no bigint UNIQUE,
  provider      text NOT NULL,
  job_id        text NOT NULL,
  kind          text,
  state         text NOT NULL,
  settled_at    timestamptz NOT NULL,
  settled_by    text
);
CREATE INDEX settlements_by_provider ON settlements (provider, settlement_no);
CREATE INDEX settlements_by_kind ON settlements (kind, settlement_no) WHERE kind IS NOT NULL;
-- Retention (retention.settlementsDays) prunes the oldest settlements first.
CREATE INDEX settlements_by_settled ON settlements (settled_at);
-- The rows still waiting for their number: only those of transactions committing right now.
CREATE INDEX settlements_unnumbered ON settlements (provider, job_id) WHERE settlement_no IS NULL;

-- Jobs settled before this migration, oldest settlement first.
INSERT INTO settlements (settlement_no, provider, job_id, kind, state, settled_at, settled_by)
  SELECT nextval('settlement_numbers'), provider, id, kind, state, settled_at, settled_by
  FROM (SELECT * FROM jobs WHERE settled_at IS NOT NULL ORDER BY settled_at, job_no) AS settled;

CREATE FUNCTION settlement_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO settlements (provider, job_id, kind, state, settled_at, settled_by)
    VALUES (NEW.provider, NEW.id, NEW.kind, NEW.state, NEW.settled_at, NEW.settled_by);
  RETURN NULL;
END $$;

CREATE TRIGGER jobs_settled_insert AFTER INSERT ON jobs
  FOR EACH ROW WHEN (NEW.settled_at IS NOT NULL) EXECUTE FUNCTION settlement_recorded();
CREATE TRIGGER jobs_settled_update AFTER UPDATE OF settled_at ON jobs
  FOR EACH ROW WHEN (OLD.settled_at IS NULL AND NEW.settled_at IS NOT NULL)
  EXECUTE FUNCTION settlement_recorded();

-- At COMMIT: the lock (keyed by the schema, so two ledgers in one database do not wait on each
-- other), the number, and a notification that PostgreSQL sends only if the transaction commits
-- (once per transaction: identical notifications are folded). Replicas LISTEN on it.
CREATE FUNCTION settlement_numbered() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('finality.settlements/' || current_schema(), 0));
  UPDATE settlements SET settlement_no = nextval('settlement_numbers')
    WHERE provider = NEW.provider AND job_id = NEW.job_id AND settlement_no IS NULL;
  PERFORM pg_notify('finality_settlements', current_schema());
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER settlements_numbered AFTER INSERT ON settlements
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION settlement_numbered();
