-- Runs on the application's own workers, SQLite. Times are epoch milliseconds; JSON values are TEXT.
-- Each run is also mirrored as a job of provider 'runs' (same id) in the jobs table.

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
-- Claimable work only: a claim never scans running or settled runs.
CREATE INDEX runs_queued ON runs (kind, run_no) WHERE status = 'queued' AND cancel_requested = 0;
CREATE INDEX runs_queued_any ON runs (run_no) WHERE status = 'queued' AND cancel_requested = 0;
CREATE INDEX runs_by_status ON runs (status, run_no);
CREATE INDEX runs_by_kind ON runs (kind, run_no);

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
-- Live leases only: a sweep costs what is due, not what is stored.
CREATE INDEX attempts_live_leases ON attempts (lease_expires_at) WHERE lease_expires_at IS NOT NULL;

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
CREATE INDEX run_events_by_run ON run_events (run_id, event_no);
CREATE INDEX run_events_by_time ON run_events (at);
