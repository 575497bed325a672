import { assertNever } from "../../core/errors.js";
import { clampLimit, decodeCursor, encodeCursor } from "../json-column.js";
import {
  type JobCount,
  type OverviewReads,
  type TimeBucket,
  type TimeWindow,
  timeSeries,
} from "../overview-reads.js";
import { type JobRow, jobFromRow, toTime } from "./postgres-rows.js";
import type { Read } from "./postgres-run-reads.js";

/** `count(*)` over a `LIMIT`ed subquery: reads at most `cap` entries of the index named beside it. */
const bounded = (where: string, capParam: number) =>
  `SELECT count(*)::int AS n FROM (SELECT 1 FROM jobs WHERE ${where} LIMIT $${capParam}) AS matched`;

const COUNT = {
  state: bounded("state = $1", 2), // jobs_by_state
  open: bounded("settled_at IS NULL AND submitted_at >= $1 AND submitted_at < $2", 3), // jobs_open_by_age
  openAll: bounded("settled_at IS NULL", 1), // jobs_open_by_age
  stuck: bounded("stuck", 1), // jobs_stuck
  conflict: bounded("conflict", 1), // jobs_conflict
  anomaly: bounded("anomaly IS NOT NULL", 1), // jobs_anomaly
  due: bounded("next_check_at IS NOT NULL AND next_check_at <= $1", 2), // jobs_due
  effects: "SELECT count(*)::int AS n FROM (SELECT 1 FROM outbox WHERE status = $1 LIMIT $2) AS matched",
} as const;

const FLAGGED = {
  conflict: "SELECT * FROM jobs WHERE conflict AND job_no < $1 ORDER BY job_no DESC LIMIT $2",
  anomaly: "SELECT * FROM jobs WHERE anomaly IS NOT NULL AND job_no < $1 ORDER BY job_no DESC LIMIT $2",
} as const;

/** Bucket number of a timestamptz column, in epoch milliseconds from $1 (the window's start). */
const bucketOf = (column: string) =>
  `floor((extract(epoch FROM ${column})::float8 * 1000 - $1::float8) / $3::float8)::bigint`;

// The newest `cap` rows of the window, then grouped: the cost is bounded by the cap.
const SETTLEMENTS = `
  SELECT ${bucketOf("settled_at")} AS bucket, coalesce(settled_by, 'unknown') AS key, count(*)::int AS n
  FROM (SELECT settled_at, settled_by FROM jobs
        WHERE settled_at >= to_timestamp($1::float8 / 1000) AND settled_at < to_timestamp($2::float8 / 1000)
        ORDER BY settled_at DESC LIMIT $4) AS recent
  GROUP BY 1, 2`; // jobs_settled_by_source

const WEBHOOK_OUTCOMES = `
  SELECT ${bucketOf("at")} AS bucket,
         CASE WHEN applied THEN 'applied' ELSE coalesce(reason, 'ignored') END AS key, count(*)::int AS n
  FROM (SELECT at, applied, reason FROM events
        WHERE at >= to_timestamp($1::float8 / 1000) AND at < to_timestamp($2::float8 / 1000) AND source = 'webhook'
        ORDER BY at DESC LIMIT $4) AS recent
  GROUP BY 1, 2`; // events_by_time

/** 9999-01-01: later than any submission, and inside timestamptz's range (unlike Date's maximum). */
const FAR_FUTURE_MS = Date.UTC(9999, 0, 1);

/** The overview reads of the PostgreSQL Store: committed data, on the pool. */
export function createPostgresOverviewReads(read: Read): OverviewReads {
  const count = async (what: string, text: string, values: unknown[]) => {
    const [row] = await read<{ n: number }>(what, text, values);
    return row?.n ?? 0;
  };

  function countOf(what: JobCount, cap: number): Promise<number> {
    switch (what.of) {
      case "state":
        return count("countJobs", COUNT.state, [what.state, cap]);
      case "open":
        if (what.submittedFrom === undefined && what.submittedBefore === undefined)
          return count("countJobs", COUNT.openAll, [cap]);
        return count("countJobs", COUNT.open, [
          toTime(what.submittedFrom ?? 0),
          toTime(what.submittedBefore ?? FAR_FUTURE_MS),
          cap,
        ]);
      case "stuck":
      case "conflict":
      case "anomaly":
        return count("countJobs", COUNT[what.of], [cap]);
      case "due":
        return count("countJobs", COUNT.due, [toTime(what.now), cap]);
      default:
        return assertNever(what, "job count");
    }
  }

  async function series(what: string, text: string, window: TimeWindow) {
    const bucketMs = Math.max(1, window.bucketMs);
    const rows = await read<{ bucket: number; key: string; n: number }>(what, text, [
      window.from,
      window.to,
      bucketMs,
      window.cap,
    ]);
    const buckets: TimeBucket[] = rows.map((r) => ({
      start: window.from + Number(r.bucket) * bucketMs,
      key: r.key,
      count: r.n,
    }));
    return timeSeries(buckets, window.cap);
  }

  return {
    async countJobs(what, cap) {
      const found = await countOf(what, cap);
      return { count: found, capped: found >= cap };
    },

    async countEffects(status, cap) {
      const found = await count("countEffects", COUNT.effects, [status, cap]);
      return { count: found, capped: found >= cap };
    },

    async oldestOpenJobs(limit) {
      const rows = await read<JobRow>(
        "oldestOpenJobs",
        "SELECT * FROM jobs WHERE settled_at IS NULL ORDER BY submitted_at, job_no LIMIT $1",
        [clampLimit(limit)],
      );
      return rows.map(jobFromRow);
    },

    async listFlaggedJobs(flag, page = {}) {
      const limit = clampLimit(page.limit);
      const after = decodeCursor(page.cursor) ?? Number.MAX_SAFE_INTEGER;
      const rows = await read<JobRow>("listFlaggedJobs", FLAGGED[flag], [after, limit + 1]);
      const more = rows.length > limit;
      const items = more ? rows.slice(0, limit) : rows;
      const last = items.at(-1);
      return { items: items.map(jobFromRow), nextCursor: more && last ? encodeCursor(last.job_no) : null };
    },

    settlementsOverTime: (window) => series("settlementsOverTime", SETTLEMENTS, window),
    webhookOutcomesOverTime: (window) => series("webhookOutcomesOverTime", WEBHOOK_OUTCOMES, window),
  };
}
