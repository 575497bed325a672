-- Finality ledger, PostgreSQL. Same logical schema as migrations/sqlite/0001_init.sql.
-- Times are timestamptz (the adapter converts to and from epoch milliseconds; microsecond
-- precision keeps every millisecond exact), except the provider's ordering key max_update_time;
-- JSON values are jsonb; flags are boolean.
-- Unqualified names: the adapter runs this with search_path set to the store's schema.

CREATE TABLE jobs (
  job_no          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  provider        text NOT NULL,
  id              text NOT NULL,
  kind            text,
  state           text NOT NULL,
  version         integer NOT NULL,
  max_seq         bigint,
  -- Not a ledger time but the provider's ordering key, kept exactly as received (epoch ms, may be
  -- fractional or beyond timestamptz's range): the reducer compares it, so it must not be rounded.
  max_update_time double precision,
  submitted_at    timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  settled_at      timestamptz,
  settled_by      text,
  registered      boolean NOT NULL DEFAULT false,
  poll_attempts   integer NOT NULL DEFAULT 0,
  next_check_at   timestamptz,
  stuck           boolean NOT NULL DEFAULT false,
  conflict        boolean NOT NULL DEFAULT false,
  anomaly         text,
  metadata        jsonb,
  result          jsonb,
  error           jsonb,
  UNIQUE (provider, id)
);
-- Due work only: settled jobs have no next_check_at, so a reconcile tick never scans them.
CREATE INDEX jobs_due ON jobs (next_check_at) WHERE next_check_at IS NOT NULL;
CREATE INDEX jobs_by_state ON jobs (state, job_no);
CREATE INDEX jobs_by_provider ON jobs (provider, job_no);
CREATE INDEX jobs_by_kind ON jobs (kind, job_no) WHERE kind IS NOT NULL;
CREATE INDEX jobs_stuck ON jobs (job_no) WHERE stuck;
CREATE INDEX jobs_open_by_age ON jobs (submitted_at) WHERE settled_at IS NULL;

CREATE TABLE events (
  event_no    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  provider    text NOT NULL,
  job_id      text NOT NULL,
  source      text NOT NULL,
  raw_state   text,
  state       text NOT NULL,
  applied     boolean NOT NULL,
  reason      text,
  delivery_id text,
  dedupe_key  text UNIQUE,
  at          timestamptz NOT NULL,
  detail      jsonb
);
CREATE INDEX events_by_job ON events (provider, job_id, event_no);
CREATE INDEX events_by_time ON events (at);

CREATE TABLE deliveries (
  provider    text NOT NULL,
  delivery_id text NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (provider, delivery_id)
);
CREATE INDEX deliveries_by_time ON deliveries (received_at);

CREATE TABLE outbox (
  effect_no       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id              text NOT NULL UNIQUE,
  provider        text NOT NULL,
  job_id          text NOT NULL,
  name            text NOT NULL,
  idempotency_key text NOT NULL UNIQUE,
  trigger         text NOT NULL,
  status          text NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  lease_until     timestamptz,
  last_error      text,
  created_at      timestamptz NOT NULL,
  delivered_at    timestamptz,
  -- One row per effect and trigger: a job settles once, and is alerted as stuck at most once.
  UNIQUE (provider, job_id, name, trigger)
);
-- Claims: due pending rows, and delivering rows whose lease ran out (a crashed dispatcher).
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX outbox_leased ON outbox (lease_until) WHERE status = 'delivering';
CREATE INDEX outbox_by_status ON outbox (status, effect_no);
CREATE INDEX outbox_by_provider ON outbox (provider, effect_no);
CREATE INDEX outbox_by_job ON outbox (job_id, effect_no);
