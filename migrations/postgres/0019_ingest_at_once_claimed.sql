-- finality_ingest (0014) enqueues its outbox rows claimed when the caller says so: an effect with
-- a "leaseUntil" is written `delivering`, attempt 1, leased until then, as the ordinary path's
-- enqueue writes a row claimed on enqueue (engine/effect-definitions.ts, claimedOnEnqueue), so
-- that the dispatcher of the process that committed it delivers it with no claim of its own
-- (DispatcherOptions.handoff). A row without one is written pending, as before: a caller of the
-- 0014 function's shape (another replica not yet upgraded) is answered as it was. The function
-- is restated whole: PL/pgSQL has no way to replace a part of a body. Only the effects' loop
-- changed.

CREATE OR REPLACE FUNCTION finality_ingest(
  p_provider text, p_id text, p_delivery_id text, p_now timestamptz,
  -- The observation, bounded and ordered as ingest has it (p_has_*: the field came, maybe null).
  p_state text, p_source text, p_raw_state text, p_kind text, p_seq bigint,
  p_update_time double precision, p_has_result boolean, p_result jsonb, p_has_error boolean,
  p_error jsonb,
  -- unknownJobs = 'adopt', and the adopted job's first check (IngestContext.firstCheckAt); else
  -- the observation as the parked row keeps it.
  p_adopt boolean, p_next_check_at timestamptz, p_observation jsonb,
  -- The event's detail: what ingest's eventOf makes of the observation.
  p_detail jsonb,
  -- Outbox rows the settling may enqueue, in the definitions' order: [{"id", "name", "key"
  -- (idempotency key), "kinds" (null: any kind), "leaseUntil" (absent: pending; else claimed by
  -- the dispatcher the commit hands it to, until then)}], and their traceparent.
  p_effects jsonb, p_trace_parent text
) RETURNS TABLE (finality_applied boolean, finality_reason text, finality_effects text[], job jobs)
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  found_job jobs;
  written jobs;
  recorded integer;
  incoming integer := finality_rank(p_state);
  current_rank integer;
  is_applied boolean := false;
  why text;
  newer boolean;
  settling boolean := incoming = 2;
  effect record;
  fired text[] := '{}';
  enqueued integer;
BEGIN
  -- Sent with its BEGIN, not awaited: outside that transaction (BEGIN failed) it writes nothing.
  PERFORM finality_expect(current_setting('finality.in_transaction', true) = 'on', 'not in a transaction');
  PERFORM finality_expect(incoming >= 0, 'a state that is not canonical');
  IF p_delivery_id IS NOT NULL THEN
    -- Waits on a concurrent insert of the same id, as the ordinary load does.
    INSERT INTO deliveries (provider, delivery_id, received_at)
      VALUES (p_provider, p_delivery_id, p_now) ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS recorded = ROW_COUNT;
    IF recorded = 0 THEN
      INSERT INTO events (provider, job_id, source, raw_state, state, applied, reason, delivery_id, dedupe_key, at, detail)
        VALUES (p_provider, p_id, p_source, p_raw_state, p_state, false, 'duplicate-delivery', p_delivery_id, NULL, p_now, p_detail);
      -- Each statement of a VOLATILE function takes a new snapshot: this one sees the job as the
      -- first delivery's transaction (waited for above) left it.
      SELECT * INTO found_job FROM jobs WHERE provider = p_provider AND id = p_id FOR UPDATE;
      RETURN QUERY SELECT false, 'duplicate-delivery'::text, fired, found_job;
      RETURN;
    END IF;
  END IF;

  SELECT * INTO found_job FROM jobs WHERE provider = p_provider AND id = p_id FOR UPDATE;
  IF found_job.provider IS NULL THEN
    -- A statement of its own, after the wait for the row: a prune that deleted the job meanwhile
    -- wrote its tombstone in the same commit.
    PERFORM finality_expect(NOT EXISTS (SELECT 1 FROM tombstones WHERE provider = p_provider AND id = p_id),
      'the job was pruned');
    IF NOT p_adopt THEN
      -- registered-only: parked as StoreTx.parkObservation parks it, on the job key's lock that
      -- take_parked takes too; a registration that committed before the lock was had is seen by
      -- the statement after it, and the observation goes through the reducer instead.
      PERFORM pg_advisory_xact_lock(hashtextextended(p_provider || '/' || p_id, 0));
      PERFORM finality_expect(NOT EXISTS (SELECT 1 FROM jobs WHERE provider = p_provider AND id = p_id),
        'the job was registered meanwhile');
      INSERT INTO parked (provider, job_id, delivery_id, parked_at, observation)
        VALUES (p_provider, p_id, p_delivery_id, p_now, p_observation) ON CONFLICT DO NOTHING;
      INSERT INTO events (provider, job_id, source, raw_state, state, applied, reason, delivery_id, dedupe_key, at, detail)
        VALUES (p_provider, p_id, p_source, p_raw_state, p_state, false, 'parked', p_delivery_id, NULL, p_now, p_detail);
      RETURN QUERY SELECT false, 'parked'::text, fired, NULL::jobs;
      RETURN;
    END IF;
    INSERT INTO jobs (provider, id, kind, state, version, max_seq, max_update_time, submitted_at,
        updated_at, settled_at, settled_by, registered, poll_attempts, last_polled_at, next_check_at,
        stuck, conflict, anomaly, last_poll_error, metadata, result, error)
      VALUES (p_provider, p_id, p_kind, p_state, 1, p_seq, p_update_time, p_now,
        p_now, CASE WHEN settling THEN p_now END, CASE WHEN settling THEN p_source END, false, 0, NULL,
        CASE WHEN settling THEN NULL ELSE p_next_check_at END,
        false, false, NULL, NULL, NULL, p_result, p_error)
      ON CONFLICT DO NOTHING RETURNING * INTO written;
    PERFORM finality_expect(written.provider IS NOT NULL, 'the job was inserted concurrently');
    -- As the ordinary insert takes them (migration 0012): any parked observation asks for more work.
    PERFORM finality_expect(NOT EXISTS (SELECT 1 FROM take_parked(p_provider, p_id)),
      'the job has parked observations');
    is_applied := true;
  ELSE
    written := found_job;
    current_rank := finality_rank(found_job.state);
    IF current_rank = 2 THEN
      IF p_state = found_job.state THEN
        why := 'duplicate';
      ELSIF settling THEN
        why := 'conflicting-terminal';
        IF NOT found_job.conflict THEN
          UPDATE jobs SET conflict = true, version = version + 1, updated_at = p_now
            WHERE job_no = found_job.job_no RETURNING * INTO written;
        END IF;
      ELSE
        why := 'lower-rank';
      END IF;
    ELSIF incoming < current_rank THEN
      why := 'lower-rank';
    ELSE
      -- Strictly newer by seq when both sides have one, else by updateTime; otherwise not newer.
      newer := CASE
        WHEN p_seq IS NOT NULL AND found_job.max_seq IS NOT NULL THEN p_seq > found_job.max_seq
        WHEN p_update_time IS NOT NULL AND found_job.max_update_time IS NOT NULL
          THEN p_update_time > found_job.max_update_time
        ELSE false
      END;
      IF incoming = current_rank AND NOT newer THEN
        why := 'stale';
      ELSE
        is_applied := true;
        -- greatest() passes over NULL: the larger of the two seen, or the one there is.
        UPDATE jobs SET state = p_state, version = version + 1,
            max_seq = greatest(max_seq, p_seq), max_update_time = greatest(max_update_time, p_update_time),
            updated_at = p_now, kind = coalesce(kind, p_kind),
            result = CASE WHEN p_has_result THEN p_result ELSE result END,
            error = CASE WHEN p_has_error THEN p_error ELSE error END,
            settled_at = CASE WHEN settling THEN p_now ELSE settled_at END,
            settled_by = CASE WHEN settling THEN p_source ELSE settled_by END,
            next_check_at = CASE WHEN settling THEN NULL ELSE next_check_at END,
            stuck = CASE WHEN settling THEN false ELSE stuck END,
            last_poll_error = CASE WHEN settling THEN NULL ELSE last_poll_error END
          WHERE job_no = found_job.job_no RETURNING * INTO written;
      END IF;
    END IF;
  END IF;
  INSERT INTO events (provider, job_id, source, raw_state, state, applied, reason, delivery_id, dedupe_key, at, detail)
    VALUES (p_provider, p_id, p_source, p_raw_state, p_state, is_applied, why, p_delivery_id, NULL, p_now, p_detail);
  -- A first terminal state (applied and settling, as an insert in a terminal state is) enqueues
  -- the effects whose kinds take the job's kind (core effectsFor), as the ordinary path does.
  IF is_applied AND settling THEN
    FOR effect IN SELECT e.value->>'id' AS id, e.value->>'name' AS name, e.value->>'key' AS key,
          e.value->'kinds' AS kinds, (e.value->>'leaseUntil')::timestamptz AS lease_until
        FROM jsonb_array_elements(p_effects) WITH ORDINALITY AS e(value, at) ORDER BY e.at LOOP
      CONTINUE WHEN jsonb_typeof(effect.kinds) = 'array'
        AND (written.kind IS NULL OR NOT effect.kinds ? written.kind);
      INSERT INTO outbox (id, provider, job_id, name, idempotency_key, trigger, status, attempts,
          next_attempt_at, lease_until, last_error, created_at, delivered_at, trace_parent)
        VALUES (effect.id, p_provider, p_id, effect.name, effect.key, p_state,
          CASE WHEN effect.lease_until IS NULL THEN 'pending' ELSE 'delivering' END,
          CASE WHEN effect.lease_until IS NULL THEN 0 ELSE 1 END,
          p_now, effect.lease_until, NULL, p_now, NULL, p_trace_parent)
        ON CONFLICT DO NOTHING;
      GET DIAGNOSTICS enqueued = ROW_COUNT;
      IF enqueued = 1 THEN
        fired := fired || effect.name;
      END IF;
    END LOOP;
  END IF;
  RETURN QUERY SELECT is_applied, why, fired, written;
END $$;
