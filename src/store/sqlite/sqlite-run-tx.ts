import { perChangedMask } from "../row-mapping.js";
import { detailOf, type RunStoreTx } from "../run-store.js";
import { ATTEMPTS, RUN_EVENTS, RUNS } from "../tables.js";
import type { SqliteDb } from "./sqlite-driver.js";
import {
  type AttemptRow,
  attemptFromRow,
  attemptParams,
  type RunEventRow,
  type RunRow,
  runEventFromRow,
  runEventParams,
  runFromRow,
  runParams,
} from "./sqlite-rows.js";

/**
 * The runs part of the SQLite StoreTx. Every call runs inside the group's `BEGIN IMMEDIATE`
 * write transaction, which already excludes every other writer: that is what makes the claim's
 * pick-then-update safe here, where PostgreSQL needs `FOR UPDATE SKIP LOCKED`.
 */
export function createSqliteRunTx(db: SqliteDb): RunStoreTx {
  const s = {
    insertRun: db.prepare(`INSERT INTO runs ${RUNS.sqlite.insert} ON CONFLICT DO NOTHING`),
    getRun: db.prepare("SELECT * FROM runs WHERE id = ?"),
    getRunOfAttempt: db.prepare("SELECT * FROM runs WHERE id = (SELECT run_id FROM attempts WHERE id = ?)"),
    getRunByKey: db.prepare("SELECT * FROM runs WHERE idempotency_key = ?"),
    // Only the columns that change: SQLite maintains every index over a column in the SET list,
    // whether its value changed or not.
    updateRun: db.prepare(
      `UPDATE runs SET ${RUNS.sqlite.assignments} WHERE id = @id AND version = @expected_version`,
    ),
    // INDEXED BY pins the partial indexes of queued runs: left to itself the planner may pick
    // the kind index and walk every settled run of that kind before the first queued one.
    pickAny: db.prepare(
      `SELECT * FROM runs INDEXED BY runs_queued_any
       WHERE status = 'queued' AND cancel_requested = 0 AND available_at <= ?
       ORDER BY run_no LIMIT 1`,
    ),
    pickKind: db.prepare(
      `SELECT * FROM runs INDEXED BY runs_queued
       WHERE kind = ? AND status = 'queued' AND cancel_requested = 0 AND available_at <= ?
       ORDER BY run_no LIMIT 1`,
    ),
    insertAttempt: db.prepare(`INSERT INTO attempts ${ATTEMPTS.sqlite.insert} ON CONFLICT DO NOTHING`),
    getAttempt: db.prepare("SELECT * FROM attempts WHERE id = ?"),
    updateAttempt: db.prepare(
      `UPDATE attempts SET ${ATTEMPTS.sqlite.assignments} WHERE id = @id AND version = @expected_version`,
    ),
    appendRunEvent: db.prepare(
      `INSERT INTO run_events ${RUN_EVENTS.sqlite.insert}
       ON CONFLICT (dedupe_key) DO NOTHING`,
    ),
    runEventByKey: db.prepare("SELECT * FROM run_events WHERE dedupe_key = ?"),
    dropRunEvent: db.prepare("DELETE FROM run_events WHERE dedupe_key = ?"),
  };

  // A CAS UPDATE of only the columns a write changed, as the jobs' updateJob does: SQLite rewrites
  // every index over a SET column and evaluates every `UPDATE OF` trigger on one, changed or not.
  const partialUpdates = (table: "runs" | "attempts", mapping: typeof RUNS.sqlite | typeof ATTEMPTS.sqlite) =>
    perChangedMask((mask) =>
      db.prepare(`UPDATE ${table} SET ${mapping.assignmentsFor(mask)} WHERE id = ? AND version = ?`),
    );
  const partialRunUpdate = partialUpdates("runs", RUNS.sqlite);
  const partialAttemptUpdate = partialUpdates("attempts", ATTEMPTS.sqlite);

  /**
   * The oldest claimable run over several kinds: one ordered index probe per kind, then the
   * smallest run number. A single `kind IN (...)` query would have to sort every queued run of
   * those kinds to find the first.
   */
  function pickByKinds(kinds: readonly string[], now: number): RunRow | undefined {
    let best: RunRow | undefined;
    for (const kind of new Set(kinds)) {
      const row = s.pickKind.get(kind, now) as RunRow | undefined;
      if (row !== undefined && (best === undefined || row.run_no < best.run_no)) best = row;
    }
    return best;
  }

  return {
    async insertRun(run) {
      return s.insertRun.run(runParams(run)).changes === 1;
    },
    async getRun(id) {
      const row = s.getRun.get(id) as RunRow | undefined;
      return row ? runFromRow(row) : null;
    },
    async getRunOfAttempt(attemptId) {
      const row = s.getRunOfAttempt.get(attemptId) as RunRow | undefined;
      return row ? runFromRow(row) : null;
    },
    async getRunByIdempotencyKey(key) {
      const row = s.getRunByKey.get(key) as RunRow | undefined;
      return row ? runFromRow(row) : null;
    },
    async updateRun(run, expectedVersion, _end, previous) {
      const mask = previous === undefined ? -1 : RUNS.sqlite.changedMask(previous, run);
      const partial = mask > 0 ? partialRunUpdate(mask) : undefined;
      if (partial === undefined) {
        return s.updateRun.run({ ...runParams(run), expected_version: expectedVersion }).changes === 1;
      }
      const values = RUNS.sqlite.maskedChanges(run, mask);
      values.push(run.id, expectedVersion);
      return partial.run(...values).changes === 1;
    },
    async pickClaimableRun(kinds, now) {
      const row = kinds === null ? (s.pickAny.get(now) as RunRow | undefined) : pickByKinds(kinds, now);
      return row ? runFromRow(row) : null;
    },
    async insertAttempt(attempt) {
      return s.insertAttempt.run(attemptParams(attempt)).changes === 1;
    },
    async getAttempt(id) {
      const row = s.getAttempt.get(id) as AttemptRow | undefined;
      return row ? attemptFromRow(row) : null;
    },
    async updateAttempt(attempt, expectedVersion, _end, previous) {
      const mask = previous === undefined ? -1 : ATTEMPTS.sqlite.changedMask(previous, attempt);
      const partial = mask > 0 ? partialAttemptUpdate(mask) : undefined;
      if (partial === undefined) {
        return (
          s.updateAttempt.run({ ...attemptParams(attempt), expected_version: expectedVersion }).changes === 1
        );
      }
      const values = ATTEMPTS.sqlite.maskedChanges(attempt, mask);
      values.push(attempt.id, expectedVersion);
      return partial.run(...values).changes === 1;
    },
    async appendRunEvent(event) {
      return s.appendRunEvent.run(runEventParams(event)).changes === 1;
    },
    // One prepared single-row insert per event, not one multi-row statement: there is no round
    // trip to save here, and a statement per row count would be parsed and cached for each count.
    async appendRunEvents(events) {
      for (const [i, event] of events.entries()) {
        if (s.appendRunEvent.run(runEventParams(event)).changes === 1) continue;
        // All or nothing: the ones written before are taken back. Their keys are theirs alone
        // (the write transaction excludes every other writer), so the key finds each.
        for (const written of events.slice(0, i)) s.dropRunEvent.run(written.dedupeKey);
        return false;
      }
      return true;
    },
    async runEventDetail(dedupeKey) {
      const row = s.runEventByKey.get(dedupeKey) as RunEventRow | undefined;
      return row === undefined ? null : detailOf(runEventFromRow(row).detail);
    },
  };
}
