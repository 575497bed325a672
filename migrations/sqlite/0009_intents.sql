-- Submission intents and discovery cursors (store/intent-store.ts).

-- What the application is about to submit, written before it calls the provider: if it crashes
-- before attaching the remote id, the intent is flagged orphaned past its deadline and a
-- discovery sweep can still match the job by the tag (the key) the provider carries.
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
-- Only open intents (no job, not yet flagged) are scanned for their deadline.
CREATE INDEX intents_open_by_deadline ON intents (deadline_at) WHERE job_id IS NULL AND orphaned_at IS NULL;
CREATE INDEX intents_orphaned ON intents (orphaned_at) WHERE job_id IS NULL AND orphaned_at IS NOT NULL;
CREATE UNIQUE INDEX intents_by_job ON intents (provider, job_id) WHERE job_id IS NOT NULL;

-- Where each provider instance's discovery sweep resumes: the lister's opaque `resume`,
-- written after every page so a restart resumes there.
CREATE TABLE discovery_cursors (
  provider   TEXT PRIMARY KEY,
  resume     TEXT,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
