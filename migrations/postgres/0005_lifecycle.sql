-- What outlives a job and what comes before it (store/lifecycle-store.ts). Same logical schema
-- as migrations/sqlite/0006_lifecycle.sql.

-- A settled job retention deleted: a late webhook or a replay for it is answered
-- `already-settled-pruned` instead of creating the job again. Kept for its own window,
-- counted from settled_at.
CREATE TABLE tombstones (
  provider     text NOT NULL,
  id           text NOT NULL,
  state        text NOT NULL,
  settled_at   timestamptz NOT NULL,
  effects_hash text NOT NULL,
  PRIMARY KEY (provider, id)
);
CREATE INDEX tombstones_by_settled ON tombstones (settled_at);

-- The early-completion inbox: verified observations for jobs not registered yet (providers
-- with `registered-only`), applied in parked_no order when the job is registered.
CREATE TABLE parked (
  parked_no   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  provider    text NOT NULL,
  job_id      text NOT NULL,
  delivery_id text,
  parked_at   timestamptz NOT NULL,
  observation jsonb NOT NULL
);
CREATE INDEX parked_by_job ON parked (provider, job_id, parked_no);
CREATE UNIQUE INDEX parked_delivery ON parked (provider, delivery_id) WHERE delivery_id IS NOT NULL;
CREATE INDEX parked_by_time ON parked (parked_at);
