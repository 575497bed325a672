-- Finality ledger, SQLite. Times are epoch milliseconds; JSON values are TEXT.

CREATE TABLE jobs (
  job_no          INTEGER PRIMARY KEY,
  provider        TEXT NOT NULL,
  id              TEXT NOT NULL,
  kind            TEXT,
  state           TEXT NOT NULL,
  version         INTEGER NOT NULL,
  max_seq         INTEGER,
  max_update_time INTEGER,
  submitted_at    INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  settled_at      INTEGER,
  settled_by      TEXT,
  registered      INTEGER NOT NULL DEFAULT 0,
  poll_attempts   INTEGER NOT NULL DEFAULT 0,
  next_check_at   INTEGER,
  stuck           INTEGER NOT NULL DEFAULT 0,
  conflict        INTEGER NOT NULL DEFAULT 0,
  anomaly         TEXT,
  metadata        TEXT,
  result          TEXT,
  error           TEXT,
  UNIQUE (provider, id)
);
-- Due work only: settled jobs have no next_check_at, so a reconcile tick never scans them.
CREATE INDEX jobs_due ON jobs (next_check_at) WHERE next_check_at IS NOT NULL;
CREATE INDEX jobs_by_state ON jobs (state, job_no);
CREATE INDEX jobs_by_provider ON jobs (provider, job_no);
CREATE INDEX jobs_by_kind ON jobs (kind, job_no) WHERE kind IS NOT NULL;
CREATE INDEX jobs_stuck ON jobs (job_no) WHERE stuck = 1;
CREATE INDEX jobs_open_by_age ON jobs (submitted_at) WHERE settled_at IS NULL;

CREATE TABLE events (
  event_no    INTEGER PRIMARY KEY,
  provider    TEXT NOT NULL,
  job_id      TEXT NOT NULL,
  source      TEXT NOT NULL,
  raw_state   TEXT,
  state       TEXT NOT NULL,
  applied     INTEGER NOT NULL,
  reason      TEXT,
  delivery_id TEXT,
  dedupe_key  TEXT,
  at          INTEGER NOT NULL,
  detail      TEXT
);
-- Partial: most events carry no dedupe key, and a NULL entry per event would cost every insert.
CREATE UNIQUE INDEX events_dedupe ON events (dedupe_key) WHERE dedupe_key IS NOT NULL;
CREATE INDEX events_by_job ON events (provider, job_id, event_no);
CREATE INDEX events_by_time ON events (at);

CREATE TABLE deliveries (
  provider    TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (provider, delivery_id)
) WITHOUT ROWID;
CREATE INDEX deliveries_by_time ON deliveries (received_at);

CREATE TABLE outbox (
  effect_no       INTEGER PRIMARY KEY,
  id              TEXT NOT NULL UNIQUE,
  provider        TEXT NOT NULL,
  job_id          TEXT NOT NULL,
  name            TEXT NOT NULL,
  idempotency_key TEXT NOT NULL UNIQUE,
  trigger         TEXT NOT NULL,
  status          TEXT NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  lease_until     INTEGER,
  last_error      TEXT,
  created_at      INTEGER NOT NULL,
  delivered_at    INTEGER,
  -- One row per effect and trigger: a job settles once, and is alerted as stuck at most once.
  UNIQUE (provider, job_id, name, trigger)
);
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX outbox_leased ON outbox (lease_until) WHERE status = 'delivering';
CREATE INDEX outbox_by_status ON outbox (status, effect_no);
