-- Row counts of jobs by state and of outbox rows by status, kept by triggers inside the writing
-- transaction (a rollback undoes them with the rows). /metrics reads these few rows instead of
-- counting whole tables: a GROUP BY over a million jobs held the event loop ~80 ms per scrape.
CREATE TABLE row_counts (
  tbl TEXT NOT NULL,
  key TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (tbl, key)
) WITHOUT ROWID;

INSERT INTO row_counts (tbl, key, n) SELECT 'jobs', state, count(*) FROM jobs GROUP BY state;
INSERT INTO row_counts (tbl, key, n) SELECT 'outbox', status, count(*) FROM outbox GROUP BY status;

CREATE TRIGGER jobs_counted_insert AFTER INSERT ON jobs BEGIN
  INSERT INTO row_counts (tbl, key, n) VALUES ('jobs', NEW.state, 1)
    ON CONFLICT (tbl, key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER jobs_counted_update AFTER UPDATE OF state ON jobs WHEN OLD.state IS NOT NEW.state BEGIN
  UPDATE row_counts SET n = n - 1 WHERE tbl = 'jobs' AND key = OLD.state;
  INSERT INTO row_counts (tbl, key, n) VALUES ('jobs', NEW.state, 1)
    ON CONFLICT (tbl, key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER jobs_counted_delete AFTER DELETE ON jobs BEGIN
  UPDATE row_counts SET n = n - 1 WHERE tbl = 'jobs' AND key = OLD.state;
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

CREATE TRIGGER outbox_counted_delete AFTER DELETE ON outbox BEGIN
  UPDATE row_counts SET n = n - 1 WHERE tbl = 'outbox' AND key = OLD.status;
END;
