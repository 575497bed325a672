import { assertNever } from "../../core/errors.js";
import { clampLimit, decodeCursor, encodeCursor } from "../json-column.js";
import {
  type JobCount,
  type OverviewReads,
  type TimeBucket,
  type TimeWindow,
  timeSeries,
} from "../overview-reads.js";
import type { SqliteDb, SqliteStatement } from "./sqlite-driver.js";
import { type JobRow, jobFromRow } from "./sqlite-rows.js";

/**
 * The overview reads of the SQLite Store, on the reader connection. Each count reads at most
 * `cap` index entries: `count(*)` over a `LIMIT`ed subquery on the index named beside it.
 */
export function createSqliteOverviewReads(reader: SqliteDb, assertOpen: () => void): OverviewReads {
  const bounded = (where: string) =>
    reader.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM jobs WHERE ${where} LIMIT @cap)`);
  const count = {
    state: bounded("state = @state"), // jobs_by_state
    open: bounded("settled_at IS NULL AND submitted_at >= @from AND submitted_at < @before"), // jobs_open_by_age
    stuck: bounded("stuck = 1"), // jobs_stuck
    conflict: bounded("conflict = 1"), // jobs_conflict
    anomaly: bounded("anomaly IS NOT NULL"), // jobs_anomaly
    due: bounded("next_check_at IS NOT NULL AND next_check_at <= @now"), // jobs_due
    effects: reader.prepare(
      "SELECT count(*) AS n FROM (SELECT 1 FROM outbox WHERE status = @status LIMIT @cap)", // outbox_by_status
    ),
  };
  const oldestOpen = reader.prepare(
    "SELECT * FROM jobs WHERE settled_at IS NULL ORDER BY submitted_at, job_no LIMIT ?",
  );
  const flagged = {
    conflict: reader.prepare(
      "SELECT * FROM jobs WHERE conflict = 1 AND job_no < ? ORDER BY job_no DESC LIMIT ?",
    ),
    anomaly: reader.prepare(
      "SELECT * FROM jobs WHERE anomaly IS NOT NULL AND job_no < ? ORDER BY job_no DESC LIMIT ?",
    ),
  };
  // The newest `cap` rows of the window, then grouped: the cost is bounded by the cap.
  const settlements = reader.prepare(
    `SELECT CAST((settled_at - @from) / @bucket AS INTEGER) AS bucket, coalesce(settled_by, 'unknown') AS key, count(*) AS n
     FROM (SELECT settled_at, settled_by FROM jobs WHERE settled_at >= @from AND settled_at < @to
           ORDER BY settled_at DESC LIMIT @cap)
     GROUP BY bucket, key`, // jobs_settled_by_source
  );
  const webhookOutcomes = reader.prepare(
    `SELECT CAST((at - @from) / @bucket AS INTEGER) AS bucket,
            CASE WHEN applied = 1 THEN 'applied' ELSE coalesce(reason, 'ignored') END AS key, count(*) AS n
     FROM (SELECT at, applied, reason FROM events WHERE at >= @from AND at < @to AND source = 'webhook'
           ORDER BY at DESC LIMIT @cap)
     GROUP BY bucket, key`, // events_by_time
  );

  function series(statement: SqliteStatement, window: TimeWindow) {
    const from = Math.trunc(window.from);
    const bucket = Math.max(1, Math.trunc(window.bucketMs));
    const rows = statement.all({ from, to: Math.trunc(window.to), bucket, cap: window.cap }) as {
      bucket: number;
      key: string;
      n: number;
    }[];
    const buckets: TimeBucket[] = rows.map((r) => ({
      start: from + r.bucket * bucket,
      key: r.key,
      count: r.n,
    }));
    return timeSeries(buckets, window.cap);
  }

  function countOf(what: JobCount, cap: number): number {
    switch (what.of) {
      case "state":
        return n(count.state.get({ state: what.state, cap }));
      case "open":
        return n(
          count.open.get({
            from: what.submittedFrom ?? Number.MIN_SAFE_INTEGER,
            before: what.submittedBefore ?? Number.MAX_SAFE_INTEGER,
            cap,
          }),
        );
      case "stuck":
      case "conflict":
      case "anomaly":
        return n(count[what.of].get({ cap }));
      case "due":
        return n(count.due.get({ now: what.now, cap }));
      default:
        return assertNever(what, "job count");
    }
  }

  return {
    async countJobs(what, cap) {
      assertOpen();
      const found = countOf(what, cap);
      return { count: found, capped: found >= cap };
    },

    async countEffects(status, cap) {
      assertOpen();
      const found = n(count.effects.get({ status, cap }));
      return { count: found, capped: found >= cap };
    },

    async oldestOpenJobs(limit) {
      assertOpen();
      return (oldestOpen.all(clampLimit(limit)) as JobRow[]).map(jobFromRow);
    },

    async listFlaggedJobs(flag, page = {}) {
      assertOpen();
      const limit = clampLimit(page.limit);
      const after = decodeCursor(page.cursor) ?? Number.MAX_SAFE_INTEGER;
      const rows = flagged[flag].all(after, limit + 1) as JobRow[];
      const more = rows.length > limit;
      const items = more ? rows.slice(0, limit) : rows;
      const last = items.at(-1);
      return { items: items.map(jobFromRow), nextCursor: more && last ? encodeCursor(last.job_no) : null };
    },

    async settlementsOverTime(window) {
      assertOpen();
      return series(settlements, window);
    },

    async webhookOutcomesOverTime(window) {
      assertOpen();
      return series(webhookOutcomes, window);
    },
  };
}

const n = (row: unknown): number => (row as { n: number }).n;
