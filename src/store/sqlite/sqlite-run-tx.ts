import type Database from "better-sqlite3";
import type { RunStoreTx } from "../run-store.js";
import {
  ATTEMPT_COLUMNS,
  type AttemptRow,
  attemptFromRow,
  attemptParams,
  RUN_COLUMNS,
  RUN_EVENT_COLUMNS,
  type RunRow,
  runEventParams,
  runFromRow,
  runParams,
} from "./sqlite-run-rows.js";

const list = (columns: readonly string[]) => columns.join(", ");
const named = (columns: readonly string[]) => columns.map((c) => `@${c}`).join(", ");
const assignments = (columns: readonly string[]) => columns.map((c) => `${c} = @${c}`).join(", ");

/**
 * The runs part of the SQLite StoreTx. Every call runs inside the group's `BEGIN IMMEDIATE`
 * write transaction, which already excludes every other writer: that is what makes the claim's
 * pick-then-update safe here, where PostgreSQL needs `FOR UPDATE SKIP LOCKED`.
 */
export function createSqliteRunTx(db: Database.Database): RunStoreTx {
  const s = {
    insertRun: db.prepare(
      `INSERT INTO runs (${list(RUN_COLUMNS)}) VALUES (${named(RUN_COLUMNS)}) ON CONFLICT DO NOTHING`,
    ),
    getRun: db.prepare("SELECT * FROM runs WHERE id = ?"),
    getRunByKey: db.prepare("SELECT * FROM runs WHERE idempotency_key = ?"),
    updateRun: db.prepare(
      `UPDATE runs SET ${assignments(RUN_COLUMNS)} WHERE id = @id AND version = @expected_version`,
    ),
    pickAny: db.prepare(
      `SELECT * FROM runs WHERE status = 'queued' AND cancel_requested = 0 AND available_at <= ?
       ORDER BY run_no LIMIT 1`,
    ),
    insertAttempt: db.prepare(
      `INSERT INTO attempts (${list(ATTEMPT_COLUMNS)}) VALUES (${named(ATTEMPT_COLUMNS)}) ON CONFLICT DO NOTHING`,
    ),
    getAttempt: db.prepare("SELECT * FROM attempts WHERE id = ?"),
    updateAttempt: db.prepare(
      `UPDATE attempts SET ${assignments(ATTEMPT_COLUMNS)} WHERE id = @id AND version = @expected_version`,
    ),
    appendRunEvent: db.prepare(
      `INSERT INTO run_events (${list(RUN_EVENT_COLUMNS)}) VALUES (${named(RUN_EVENT_COLUMNS)})
       ON CONFLICT (dedupe_key) DO NOTHING`,
    ),
  };
  // One statement per number of kinds asked for; workers ask with the same few lists.
  const pickByKinds = new Map<number, Database.Statement>();
  function pickStatement(count: number): Database.Statement {
    let statement = pickByKinds.get(count);
    if (statement === undefined) {
      statement = db.prepare(
        `SELECT * FROM runs WHERE status = 'queued' AND cancel_requested = 0 AND available_at <= ?
         AND kind IN (${Array.from({ length: count }, () => "?").join(", ")})
         ORDER BY run_no LIMIT 1`,
      );
      pickByKinds.set(count, statement);
    }
    return statement;
  }

  return {
    async insertRun(run) {
      return s.insertRun.run(runParams(run)).changes === 1;
    },
    async getRun(id) {
      const row = s.getRun.get(id) as RunRow | undefined;
      return row ? runFromRow(row) : null;
    },
    async getRunByIdempotencyKey(key) {
      const row = s.getRunByKey.get(key) as RunRow | undefined;
      return row ? runFromRow(row) : null;
    },
    async updateRun(run, expectedVersion) {
      return s.updateRun.run({ ...runParams(run), expected_version: expectedVersion }).changes === 1;
    },
    async pickClaimableRun(kinds, now) {
      const row = (
        kinds === null
          ? s.pickAny.get(now)
          : kinds.length === 0
            ? undefined
            : pickStatement(kinds.length).get(now, ...kinds)
      ) as RunRow | undefined;
      return row ? runFromRow(row) : null;
    },
    async insertAttempt(attempt) {
      return s.insertAttempt.run(attemptParams(attempt)).changes === 1;
    },
    async getAttempt(id) {
      const row = s.getAttempt.get(id) as AttemptRow | undefined;
      return row ? attemptFromRow(row) : null;
    },
    async updateAttempt(attempt, expectedVersion) {
      return (
        s.updateAttempt.run({ ...attemptParams(attempt), expected_version: expectedVersion }).changes === 1
      );
    },
    async appendRunEvent(event) {
      return s.appendRunEvent.run(runEventParams(event)).changes === 1;
    },
  };
}
