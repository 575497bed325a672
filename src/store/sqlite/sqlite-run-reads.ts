import type { RunStatus } from "../../core/run-model.js";
import { clampLimit } from "../json-column.js";
import { runsPage } from "../keyset-page.js";
import type { DueLease, RunPage, RunQuery, RunStore } from "../run-store.js";
import type { SqliteDb } from "./sqlite-driver.js";
import { readSqlitePage } from "./sqlite-page.js";
import {
  type AttemptRow,
  attemptFromRow,
  type RunEventRow,
  type RunRow,
  runEventFromRow,
  runFromRow,
} from "./sqlite-rows.js";

/**
 * The runs part of the SQLite Store: reads on the reader connection (WAL: committed data only,
 * never waiting for the writer). `assertOpen` throws once the store is closed.
 */
export function createSqliteRunReads(reader: SqliteDb, assertOpen: () => void): RunStore {
  const s = {
    run: reader.prepare("SELECT * FROM runs WHERE id = ?"),
    attempts: reader.prepare("SELECT * FROM attempts WHERE run_id = ? ORDER BY generation"),
    events: reader.prepare(
      "SELECT * FROM run_events WHERE run_id = ? AND event_no > ? ORDER BY event_no LIMIT ?",
    ),
    dueLeases: reader.prepare(
      `SELECT id, run_id, lease_expires_at FROM attempts
       WHERE lease_expires_at IS NOT NULL AND lease_expires_at <= ? ORDER BY lease_expires_at LIMIT ?`,
    ),
    stats: reader.prepare("SELECT status, count(*) AS n FROM runs GROUP BY status"),
  };

  return {
    async getRun(id) {
      assertOpen();
      const row = s.run.get(id) as RunRow | undefined;
      return row ? runFromRow(row) : null;
    },

    async listRuns(query: RunQuery): Promise<RunPage> {
      assertOpen();
      return readSqlitePage(reader, runsPage(query), runFromRow);
    },

    async runAttempts(runId) {
      assertOpen();
      return (s.attempts.all(runId) as AttemptRow[]).map(attemptFromRow);
    },

    async runEvents(runId, page = {}) {
      assertOpen();
      const rows = s.events.all(
        runId,
        page.after ?? 0,
        clampLimit(page.limit, 1000, 10_000),
      ) as RunEventRow[];
      return rows.map(runEventFromRow);
    },

    async dueLeases(now, limit): Promise<DueLease[]> {
      assertOpen();
      const rows = s.dueLeases.all(now, limit) as { id: string; run_id: string; lease_expires_at: number }[];
      return rows.map((r) => ({ attemptId: r.id, runId: r.run_id, leaseExpiresAt: r.lease_expires_at }));
    },

    async runStats() {
      assertOpen();
      const rows = s.stats.all() as { status: RunStatus; n: number }[];
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    },
  };
}
