-- Submission intents and discovery cursors (store/intent-store.ts). Same logical schema as
-- migrations/sqlite/0009_intents.sql.

-- What the application is about to submit, written before it calls the provider: if it crashes
-- before attaching the remote id, the intent is flagged orphaned past its deadline and a
-- discovery sweep can still match the job by the tag (the key) the provider carries.
CREATE TABLE intents (
  key             text PRIMARY KEY,
  provider        text NOT NULL,
  kind            text,
  metadata        jsonb,
  idempotency_key text NOT NULL,
  created_at      timestamptz NOT NULL,
  -- created_at + the provider's intentTimeoutSeconds, fixed when recorded.
  deadline_at     timestamptz NOT NULL,
  job_id          text,
  attached_at     timestamptz,
  attached_by     text,
  orphaned_at     timestamptz
);
-- Only open intents (no job, not yet flagged) are scanned for their deadline.
CREATE INDEX intents_open_by_deadline ON intents (deadline_at) WHERE job_id IS NULL AND orphaned_at IS NULL;
CREATE INDEX intents_orphaned ON intents (orphaned_at) WHERE job_id IS NULL AND orphaned_at IS NOT NULL;
CREATE UNIQUE INDEX intents_by_job ON intents (provider, job_id) WHERE job_id IS NOT NULL;

-- Where each provider instance's discovery sweep resumes: the lister's opaque `resume`,
-- written after every page so a restart resumes there.
CREATE TABLE discovery_cursors (
  provider   text PRIMARY KEY,
  resume     text,
  updated_at timestamptz NOT NULL
);
