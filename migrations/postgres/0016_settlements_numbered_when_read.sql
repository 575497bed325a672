-- Settlements are numbered when they are read, not at COMMIT (issue 29: replicas must not wait on
-- each other). Migration 0007 numbered each settling transaction's rows at its COMMIT under the
-- schema's advisory lock, held until that transaction ended: every settling commit of every
-- replica queued behind the one before, through its WAL flush (4.7 ms a completion in a runs
-- drain). Now a settling commit takes no lock: its rows commit with settlement_no NULL, and its
-- NOTIFY (still sent only if it commits) wakes the readers.
--
-- finality_number_settlements() numbers every committed unnumbered row, in one short transaction
-- of its own under the same lock, and answers the newest number. Readers call it before they read
-- (store/postgres/postgres-settlements.ts), and retention before it prunes the feed, so rows wait
-- unnumbered only while nobody reads. The reasoning of 0007 holds for these transactions instead:
-- the k-th numbering takes the lock after the one before it ended, and PostgreSQL makes a commit
-- visible before it releases the transaction's locks, so a snapshot that sees a number sees every
-- number below it. The UPDATE's snapshot is taken after the lock: it sees every row committed
-- before, and a row committed after it waits, unnumbered and unseen, for the next call. A row of a
-- transaction still in flight is invisible, so no reader's cursor can pass it.
DROP TRIGGER settlements_numbered ON settlements;
DROP FUNCTION settlement_numbered();

CREATE FUNCTION settlement_notified() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Sent at COMMIT only, once per transaction (identical notifications are folded).
  PERFORM pg_notify('finality_settlements', current_schema());
  RETURN NULL;
END $$;

CREATE TRIGGER settlements_notify AFTER INSERT ON settlements
  FOR EACH ROW EXECUTE FUNCTION settlement_notified();

-- Within a call, rows are numbered in the order their transactions took their ids (age(xmin), safe
-- across wraparound), then by settlement time: a transaction that committed before another began
-- took its id first, so the feed keeps commit order wherever commits did not overlap, whichever
-- replica's clock wrote settled_at. Each row is found again by its ctid (no other transaction
-- writes an unnumbered row: retention deletes numbered ones only).
CREATE FUNCTION finality_number_settlements() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  newest bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('finality.settlements/' || current_schema(), 0));
  WITH pending AS MATERIALIZED (
    SELECT ctid AS row_id FROM settlements
    WHERE settlement_no IS NULL ORDER BY age(xmin) DESC, settled_at, amendment, provider, job_id
  ), numbered AS MATERIALIZED (
    SELECT row_id, nextval('settlement_numbers') AS n FROM pending
  )
  UPDATE settlements s SET settlement_no = numbered.n FROM numbered WHERE s.ctid = numbered.row_id;
  SELECT coalesce(max(settlement_no), 0) INTO newest FROM settlements;
  RETURN newest;
END $$;
