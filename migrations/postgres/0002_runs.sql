-- Runs on the application's own workers, PostgreSQL. Same logical schema as
-- migrations/sqlite/0002_runs.sql; times are timestamptz, JSON values jsonb, flags boolean.
-- Each run is also mirrored as a job of provider 'runs' (same id) in the jobs table.

CREATE TABLE runs (
  run_no             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id                 text NOT NULL UNIQUE,
  kind               text NOT NULL,
  status             text NOT NULL,
  version            integer NOT NULL,
  input              jsonb,
  output             jsonb,
  error              jsonb,
  idempotency_key    text UNIQUE,
  max_attempts       integer NOT NULL,
  attempt_count      integer NOT NULL DEFAULT 0,
  -- Fencing token: the latest attempt's generation; only grows.
  generation         integer NOT NULL DEFAULT 0,
  current_attempt_id text,
  cancel_requested   boolean NOT NULL DEFAULT false,
  -- Retry backoff: not claimable before this time.
  available_at       timestamptz NOT NULL,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  settled_at         timestamptz
);
-- Claimable work only: a claim never scans running or settled runs.
CREATE INDEX runs_queued ON runs (kind, run_no) WHERE status = 'queued' AND NOT cancel_requested;
CREATE INDEX runs_queued_any ON runs (run_no) WHERE status = 'queued' AND NOT cancel_requested;
CREATE INDEX runs_by_status ON runs (status, run_no);
CREATE INDEX runs_by_kind ON runs (kind, run_no);

CREATE TABLE attempts (
  attempt_no       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id               text NOT NULL UNIQUE,
  run_id           text NOT NULL REFERENCES runs (id),
  worker_id        text NOT NULL,
  generation       integer NOT NULL,
  status           text NOT NULL,
  last_sequence    bigint,
  -- A duration, not a time: milliseconds.
  lease_ms         bigint NOT NULL,
  -- NULL once the attempt holds no lease (finished, lost or released).
  lease_expires_at timestamptz,
  version          integer NOT NULL,
  output           jsonb,
  error            jsonb,
  progress         jsonb,
  claimed_at       timestamptz NOT NULL,
  started_at       timestamptz,
  heartbeat_at     timestamptz,
  ended_at         timestamptz,
  updated_at       timestamptz NOT NULL,
  UNIQUE (run_id, generation)
);
-- Live leases only: a sweep costs what is due, not what is stored.
CREATE INDEX attempts_live_leases ON attempts (lease_expires_at) WHERE lease_expires_at IS NOT NULL;

CREATE TABLE run_events (
  event_no   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- e.g. attempt:{attemptId}:seq:{n}, lease-expiry:{attemptId}:{generation}:{phase}
  dedupe_key text NOT NULL UNIQUE,
  run_id     text NOT NULL,
  attempt_id text,
  actor      text NOT NULL,
  type       text NOT NULL,
  at         timestamptz NOT NULL,
  detail     jsonb
);
CREATE INDEX run_events_by_run ON run_events (run_id, event_no);
CREATE INDEX run_events_by_time ON run_events (at);
