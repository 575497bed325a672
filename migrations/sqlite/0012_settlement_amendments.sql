-- Settlement amendments (store/settlement-feed.ts). A job adopted from an early webhook settles
-- with no kind; its kind arrives later, with a registration or an intent's attach. Its feed row
-- keeps kind NULL, so a reader filtered by kind would never see the job. When a settled job's
-- kind arrives, this trigger writes an amendment in the same transaction: a second row for the
-- same settlement, with the kind, marked amendment = 1. Kind-filtered readers read amendments
-- (the original row, kind NULL, never matches them); every other reader skips them, so an
-- unfiltered reader still sees each settlement once. A kind is only ever filled, never changed
-- (registration fills what is missing), so a job has at most one amendment.
ALTER TABLE settlements ADD COLUMN amendment INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER jobs_kind_after_settled AFTER UPDATE OF kind ON jobs
  WHEN OLD.settled_at IS NOT NULL AND OLD.kind IS NULL AND NEW.kind IS NOT NULL BEGIN
  INSERT INTO settlements (provider, job_id, kind, state, settled_at, settled_by, amendment)
    VALUES (NEW.provider, NEW.id, NEW.kind, NEW.state, NEW.settled_at, NEW.settled_by, 1);
END;
