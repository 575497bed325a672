-- A statement that checks its own outcome (postgres-client.ts, QueryOptions.last): the COMMIT of
-- its transaction goes out right behind it, before its answer, so a check of that answer in the
-- client would come too late. false raises FNL01 instead: the transaction is aborted, the COMMIT
-- behind answers ROLLBACK, and the work is run again the ordinary way.
CREATE FUNCTION finality_expect(ok boolean, what text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'finality: %', what USING ERRCODE = 'FNL01';
  END IF;
  RETURN true;
END $$;
