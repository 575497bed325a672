CREATE TABLE attempts (
  attempt_no       INTEGER PRIMARY KEY,
  id               TEXT NOT NULL UNIQUE,
  run_id           TEXT NOT NULL REFERENCES runs (id),
  worker_id        TEXT NOT NULL,
  generation       INTEGER NOT NULL,
  status           TEXT NOT NULL,
  last_sequence    INTEGER,
  lease_ms         INTEGER NOT NULL,
  -- NULL once the attempt holds no lease (finished, lost or released).
  lease_expires_at INTEGER,
  version          INTEGER NOT NULL,
  output           TEXT,
  error            TEXT,
  progress         TEXT,
  claimed_at       INTEGER NOT NULL,
  started_at       INTEGER,
  heartbeat_at     INTEGER,
  ended_at         INTEGER,
  updated_at       INTEGER NOT NULL,
  UNIQUE (run_id, generation)
);

CREATE TABLE deliveries (
  provider    TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (provider, delivery_id)
) WITHOUT ROWID;

CREATE TABLE discovery_cursors (
  provider   TEXT PRIMARY KEY,
  resume     TEXT,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;

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

CREATE TABLE intents (
  key             TEXT PRIMARY KEY,
  provider        TEXT NOT NULL,
  kind            TEXT,
  metadata        TEXT,
  idempotency_key TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  -- created_at + the provider's intentTimeoutSeconds, fixed when recorded.
  deadline_at     INTEGER NOT NULL,
  job_id          TEXT,
  attached_at     INTEGER,
  attached_by     TEXT,
  orphaned_at     INTEGER
) WITHOUT ROWID;

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
  error           TEXT, last_poll_error TEXT, last_polled_at INTEGER,
  UNIQUE (provider, id)
);

CREATE TABLE "outbox" (
  effect_no       INTEGER PRIMARY KEY,
  id              TEXT NOT NULL UNIQUE,
  provider        TEXT NOT NULL,
  job_id          TEXT NOT NULL,
  name            TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  trigger         TEXT NOT NULL,
  status          TEXT NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  lease_until     INTEGER,
  last_error      TEXT,
  created_at      INTEGER NOT NULL,
  delivered_at    INTEGER,
  trace_parent    TEXT,
  -- One row per effect and trigger: a job settles once, and is alerted as stuck at most once.
  UNIQUE (provider, job_id, name, trigger)
);

CREATE TABLE parked (
  parked_no   INTEGER PRIMARY KEY,
  provider    TEXT NOT NULL,
  job_id      TEXT NOT NULL,
  delivery_id TEXT,
  parked_at   INTEGER NOT NULL,
  observation TEXT NOT NULL
);

CREATE TABLE row_counts (
  tbl TEXT NOT NULL,
  key TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (tbl, key)
) WITHOUT ROWID;

CREATE TABLE run_events (
  event_no   INTEGER PRIMARY KEY,
  -- e.g. attempt:{attemptId}:seq:{n}, lease-expiry:{attemptId}:{generation}:{phase}
  dedupe_key TEXT NOT NULL UNIQUE,
  run_id     TEXT NOT NULL,
  attempt_id TEXT,
  actor      TEXT NOT NULL,
  type       TEXT NOT NULL,
  at         INTEGER NOT NULL,
  detail     TEXT
);

CREATE TABLE runs (
  run_no             INTEGER PRIMARY KEY,
  id                 TEXT NOT NULL UNIQUE,
  kind               TEXT NOT NULL,
  status             TEXT NOT NULL,
  version            INTEGER NOT NULL,
  input              TEXT,
  output             TEXT,
  error              TEXT,
  idempotency_key    TEXT UNIQUE,
  max_attempts       INTEGER NOT NULL,
  attempt_count      INTEGER NOT NULL DEFAULT 0,
  -- Fencing token: the latest attempt's generation; only grows.
  generation         INTEGER NOT NULL DEFAULT 0,
  current_attempt_id TEXT,
  cancel_requested   INTEGER NOT NULL DEFAULT 0,
  -- Retry backoff: not claimable before this time.
  available_at       INTEGER NOT NULL,
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL,
  settled_at         INTEGER
);

CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);

CREATE TABLE settlements (
  settlement_no INTEGER PRIMARY KEY AUTOINCREMENT,
  provider      TEXT NOT NULL,
  job_id        TEXT NOT NULL,
  kind          TEXT,
  state         TEXT NOT NULL,
  settled_at    INTEGER NOT NULL,
  settled_by    TEXT
, amendment INTEGER NOT NULL DEFAULT 0);

CREATE TABLE tombstones (
  provider     TEXT NOT NULL,
  id           TEXT NOT NULL,
  state        TEXT NOT NULL,
  settled_at   INTEGER NOT NULL,
  effects_hash TEXT NOT NULL,
  PRIMARY KEY (provider, id)
) WITHOUT ROWID;

CREATE INDEX attempts_live_leases ON attempts (lease_expires_at) WHERE lease_expires_at IS NOT NULL;

CREATE INDEX deliveries_by_time ON deliveries (received_at);

CREATE INDEX events_by_job ON events (provider, job_id, event_no);

CREATE INDEX events_by_time ON events (at);

CREATE UNIQUE INDEX events_dedupe ON events (dedupe_key) WHERE dedupe_key IS NOT NULL;

CREATE UNIQUE INDEX intents_by_job ON intents (provider, job_id) WHERE job_id IS NOT NULL;

CREATE INDEX intents_open_by_deadline ON intents (deadline_at) WHERE job_id IS NULL AND orphaned_at IS NULL;

CREATE INDEX intents_orphaned ON intents (orphaned_at) WHERE job_id IS NULL AND orphaned_at IS NOT NULL;

CREATE INDEX jobs_anomaly ON jobs (job_no) WHERE anomaly IS NOT NULL;

CREATE INDEX jobs_by_kind ON jobs (kind, job_no) WHERE kind IS NOT NULL;

CREATE INDEX jobs_by_provider ON jobs (provider, job_no);

CREATE INDEX jobs_by_state ON jobs (state, job_no);

CREATE INDEX jobs_conflict ON jobs (job_no) WHERE conflict = 1;

CREATE INDEX jobs_due ON jobs (next_check_at) WHERE next_check_at IS NOT NULL;

CREATE INDEX jobs_open_by_age ON jobs (submitted_at) WHERE settled_at IS NULL;

CREATE INDEX jobs_settled_by_source ON jobs (settled_at, settled_by) WHERE settled_at IS NOT NULL;

CREATE INDEX jobs_stuck ON jobs (job_no) WHERE stuck = 1;

CREATE INDEX outbox_by_status ON outbox (status, effect_no);

CREATE INDEX outbox_delivered ON outbox (delivered_at) WHERE status = 'delivered';

CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE status = 'pending';

CREATE INDEX outbox_leased ON outbox (lease_until) WHERE status = 'delivering';

CREATE INDEX parked_by_job ON parked (provider, job_id, parked_no);

CREATE INDEX parked_by_time ON parked (parked_at);

CREATE UNIQUE INDEX parked_delivery ON parked (provider, delivery_id) WHERE delivery_id IS NOT NULL;

CREATE INDEX run_events_by_run ON run_events (run_id, event_no);

CREATE INDEX run_events_by_time ON run_events (at);

CREATE INDEX runs_by_kind ON runs (kind, run_no);

CREATE INDEX runs_by_status ON runs (status, run_no);

CREATE INDEX runs_queued ON runs (kind, run_no) WHERE status = 'queued' AND cancel_requested = 0;

CREATE INDEX runs_queued_any ON runs (run_no) WHERE status = 'queued' AND cancel_requested = 0;

CREATE INDEX runs_settled ON runs (settled_at) WHERE settled_at IS NOT NULL;

CREATE INDEX settlements_by_kind ON settlements (kind, settlement_no) WHERE kind IS NOT NULL;

CREATE INDEX settlements_by_provider ON settlements (provider, settlement_no);

CREATE INDEX settlements_by_settled ON settlements (settled_at);

CREATE INDEX tombstones_by_settled ON tombstones (settled_at);

CREATE TRIGGER jobs_counted_delete AFTER DELETE ON jobs BEGIN
  UPDATE row_counts SET n = n - 1 WHERE tbl = 'jobs' AND key = OLD.state;
END;

CREATE TRIGGER jobs_counted_insert AFTER INSERT ON jobs BEGIN
  INSERT INTO row_counts (tbl, key, n) VALUES ('jobs', NEW.state, 1)
    ON CONFLICT (tbl, key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER jobs_counted_update AFTER UPDATE OF state ON jobs WHEN OLD.state IS NOT NEW.state BEGIN
  UPDATE row_counts SET n = n - 1 WHERE tbl = 'jobs' AND key = OLD.state;
  INSERT INTO row_counts (tbl, key, n) VALUES ('jobs', NEW.state, 1)
    ON CONFLICT (tbl, key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER jobs_kind_after_settled AFTER UPDATE OF kind ON jobs
  WHEN OLD.settled_at IS NOT NULL AND OLD.kind IS NULL AND NEW.kind IS NOT NULL BEGIN
  INSERT INTO settlements (provider, job_id, kind, state, settled_at, settled_by, amendment)
    VALUES (NEW.provider, NEW.id, NEW.kind, NEW.state, NEW.settled_at, NEW.settled_by, 1);
END;

CREATE TRIGGER jobs_settled_insert AFTER INSERT ON jobs WHEN NEW.settled_at IS NOT NULL BEGIN
  INSERT INTO settlements (provider, job_id, kind, state, settled_at, settled_by)
    VALUES (NEW.provider, NEW.id, NEW.kind, NEW.state, NEW.settled_at, NEW.settled_by);
END;

CREATE TRIGGER jobs_settled_update AFTER UPDATE OF settled_at ON jobs
  WHEN OLD.settled_at IS NULL AND NEW.settled_at IS NOT NULL BEGIN
  INSERT INTO settlements (provider, job_id, kind, state, settled_at, settled_by)
    VALUES (NEW.provider, NEW.id, NEW.kind, NEW.state, NEW.settled_at, NEW.settled_by);
END;

CREATE TRIGGER outbox_counted_delete AFTER DELETE ON outbox BEGIN
  UPDATE row_counts SET n = n - 1 WHERE tbl = 'outbox' AND key = OLD.status;
END;

CREATE TRIGGER outbox_counted_insert AFTER INSERT ON outbox BEGIN
  INSERT INTO row_counts (tbl, key, n) VALUES ('outbox', NEW.status, 1)
    ON CONFLICT (tbl, key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER outbox_counted_update AFTER UPDATE OF status ON outbox WHEN OLD.status IS NOT NEW.status BEGIN
  UPDATE row_counts SET n = n - 1 WHERE tbl = 'outbox' AND key = OLD.status;
  INSERT INTO row_counts (tbl, key, n) VALUES ('outbox', NEW.status, 1)
    ON CONFLICT (tbl, key) DO UPDATE SET n = n + 1;
END;
