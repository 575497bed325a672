-- A COMMIT sent before the answers it follows (postgres-client.ts, flushSoon) is preceded by
-- finality_before(the latest database time at which it may still commit). A client that waited
-- past its deadline told its caller the transaction failed (a webhook answered 503): a frozen
-- server or a network that held the bytes must not commit it afterwards, when it wakes. Too late,
-- the transaction is aborted (query_canceled, as a statement_timeout would), and the COMMIT
-- behind answers ROLLBACK.
CREATE FUNCTION finality_before(latest_ms float8) RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  late float8 := extract(epoch FROM clock_timestamp()) * 1000 - latest_ms;
BEGIN
  IF late > 0 THEN
    RAISE EXCEPTION 'finality: the client''s deadline passed % ms before the COMMIT', round(late)
      USING ERRCODE = 'query_canceled';
  END IF;
  RETURN true;
END $$;
