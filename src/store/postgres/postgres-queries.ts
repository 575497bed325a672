import { effectsPage, jobsPage, type KeysetStatement, keysetStatement } from "../keyset-page.js";
import type { EffectQuery, JobQuery } from "../store.js";
import { EFFECTS } from "../tables.js";

/** `sql` with each `$n` moved up by `by`, so that it can follow another statement's parameters. */
export const shifted = (sql: string, by: number) =>
  sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + by}`);

/** Newest first, keyset on job_no: the cursor is the last job_no of the previous page (as on SQLite). */
export const listJobsStatement = (query: JobQuery): KeysetStatement =>
  keysetStatement(jobsPage(query, "postgres"), "postgres");

/** Newest first, keyset on effect_no. */
export const listEffectsStatement = (query: EffectQuery): KeysetStatement =>
  keysetStatement(effectsPage(query), "postgres");

/**
 * Due pending effects, then effects whose delivery lease ran out (a dispatcher died), as on
 * SQLite. SKIP LOCKED: replicas claiming at once each take different rows and never wait on
 * each other; the row locks last only for this one statement. Each branch is ordered by its
 * partial index's column alone, so a backlog is read in index order, never sorted whole. The
 * claimed rows come back as one json column each (EFFECTS.postgres.selectArrayOf): node-postgres
 * describes and maps every column of an answer, per answer and per row.
 */
export const CLAIM_EFFECTS = `
  WITH pending AS (
    SELECT effect_no, 0 AS branch, next_attempt_at AS due_at FROM outbox
    WHERE status = 'pending' AND next_attempt_at <= $1
    ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED
  ), expired AS (
    SELECT effect_no, 1 AS branch, lease_until AS due_at FROM outbox
    WHERE status = 'delivering' AND lease_until <= $1
    ORDER BY lease_until LIMIT $2 FOR UPDATE SKIP LOCKED
  ), due AS (
    SELECT * FROM (SELECT * FROM pending UNION ALL SELECT * FROM expired) AS both_kinds
    ORDER BY branch, due_at, effect_no LIMIT $2
  )
  UPDATE outbox o SET status = 'delivering', attempts = o.attempts + 1, lease_until = $3
  FROM due WHERE o.effect_no = due.effect_no
  RETURNING ${EFFECTS.postgres.selectArrayOf("o")} AS r, o.effect_no, due.branch AS claim_branch,
    round(extract(epoch FROM due.due_at) * 1000)::float8 AS claim_due_ms`;

export const FINISH_EFFECT = `
  UPDATE outbox SET status = $2, next_attempt_at = $3, lease_until = NULL, last_error = $4, delivered_at = $5
  WHERE id = $1 AND status = 'delivering' AND lease_until = $6`;

/** A heartbeat: moves the lease of a delivery still in flight, only while the caller holds the claim. */
export const EXTEND_EFFECT_LEASE = `
  UPDATE outbox SET lease_until = $3
  WHERE id = $1 AND status = 'delivering' AND lease_until = $2`;

/**
 * Jobs due for a poll, earliest first; pushing next_check_at to the lease hides them from other
 * replicas. As on SQLite, the state is not checked: settling a job clears its next_check_at.
 */
export function claimDueJobsText(byProvider: boolean): string {
  return `
  WITH due AS (
    SELECT job_no, next_check_at AS due_at FROM jobs
    WHERE next_check_at IS NOT NULL AND next_check_at <= $1 ${byProvider ? "AND provider = ANY($4::text[])" : ""}
    ORDER BY next_check_at LIMIT $2 FOR UPDATE SKIP LOCKED
  )
  UPDATE jobs j SET next_check_at = $3 FROM due WHERE j.job_no = due.job_no
  RETURNING j.*, due.due_at AS claim_due_at`;
}

export const STATS = `
  SELECT
    (SELECT coalesce(jsonb_object_agg(state, n), '{}'::jsonb)
       FROM (SELECT state, count(*) AS n FROM jobs GROUP BY state) AS s) AS jobs_by_state,
    (SELECT coalesce(jsonb_object_agg(status, n), '{}'::jsonb)
       FROM (SELECT status, count(*) AS n FROM outbox GROUP BY status) AS s) AS effects_by_status,
    (SELECT count(*) FROM jobs WHERE stuck) AS stuck_jobs,
    (SELECT count(*) FROM jobs WHERE conflict) AS conflict_jobs,
    (SELECT min(submitted_at) FROM jobs WHERE settled_at IS NULL) AS oldest_open_submitted_at,
    (SELECT count(*) FROM jobs WHERE next_check_at IS NOT NULL AND next_check_at <= $1) AS due_jobs`;
