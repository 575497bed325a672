-- What outlives a job and what comes before it (store/lifecycle-store.ts).

-- A settled job retention deleted: a late webhook or a replay for it is answered
-- `already-settled-pruned` instead of creating the job again. Kept for its own window,
-- counted from settled_at. Small on purpose: a key, a state, a time and a 128-bit hash.
CREATE TABLE tombstones (
  provider     TEXT NOT NULL,
  id           TEXT NOT NULL,
  state        TEXT NOT NULL,
  settled_at   INTEGER NOT NULL,
  effects_hash TEXT NOT NULL,
  PRIMARY KEY (provider, id)
) WITHOUT ROWID;
CREATE INDEX tombstones_by_settled ON tombstones (settled_at);

-- The early-completion inbox: verified observations for jobs not registered yet (providers
-- with `registered-only`), applied in parked_no order when the job is registered.
CREATE TABLE parked (
  parked_no   INTEGER PRIMARY KEY,
  provider    TEXT NOT NULL,
  job_id      TEXT NOT NULL,
  delivery_id TEXT,
  parked_at   INTEGER NOT NULL,
  observation TEXT NOT NULL
);
CREATE INDEX parked_by_job ON parked (provider, job_id, parked_no);
CREATE UNIQUE INDEX parked_delivery ON parked (provider, delivery_id) WHERE delivery_id IS NOT NULL;
CREATE INDEX parked_by_time ON parked (parked_at);
