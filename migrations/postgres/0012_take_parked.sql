-- A job's parked observations taken in one round trip instead of two (store/lifecycle-store.ts
-- takeParked, called whenever an ingest creates a job). Parking and taking queue on one advisory
-- lock per job key (postgres-lifecycle.ts); the DELETE must see every row parked by a transaction
-- that committed while this one waited for that lock. In a VOLATILE function under READ
-- COMMITTED each statement takes a new snapshot, after the lock is held; one statement that took
-- the lock in a subquery would read with the snapshot of its start, from before the wait.
CREATE FUNCTION take_parked(p_provider text, p_job_id text) RETURNS SETOF parked
  LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_provider || '/' || p_job_id, 0));
  RETURN QUERY DELETE FROM parked WHERE provider = p_provider AND job_id = p_job_id RETURNING *;
END $$;
