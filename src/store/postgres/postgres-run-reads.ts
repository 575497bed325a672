import type { RunStatus } from "../../core/run-model.js";
import { clampLimit } from "../json-column.js";
import { keysetPage, keysetStatement, runsPage } from "../keyset-page.js";
import type { DueLease, RunPage, RunQuery, RunStore } from "../run-store.js";
import {
  type AttemptRow,
  attemptFromRow,
  fromTime,
  type RunEventRow,
  type RunRow,
  runEventFromRow,
  runFromRow,
  toTime,
} from "./postgres-rows.js";

/** Runs a read on the pool: opens the store first, maps driver errors. */
export type Read = <T>(what: string, text: string, values?: readonly unknown[]) => Promise<T[]>;

/** The runs part of the PostgreSQL Store: reads outside transactions (committed data only). */
export function createPostgresRunReads(read: Read): RunStore {
  return {
    async getRun(id) {
      const [row] = await read<RunRow>("getRun", "SELECT * FROM runs WHERE id = $1", [id]);
      return row ? runFromRow(row) : null;
    },

    async listRuns(query: RunQuery): Promise<RunPage> {
      const { text, values, limit } = keysetStatement(runsPage(query), "postgres");
      const rows = await read<RunRow>("listRuns", text, values);
      return keysetPage(rows, limit, runFromRow, (row) => row.run_no);
    },

    async runAttempts(runId) {
      const rows = await read<AttemptRow>(
        "runAttempts",
        "SELECT * FROM attempts WHERE run_id = $1 ORDER BY generation",
        [runId],
      );
      return rows.map(attemptFromRow);
    },

    async runEvents(runId, page = {}) {
      const rows = await read<RunEventRow>(
        "runEvents",
        "SELECT * FROM run_events WHERE run_id = $1 AND event_no > $2 ORDER BY event_no LIMIT $3",
        [runId, page.after ?? 0, clampLimit(page.limit, 1000, 10_000)],
      );
      return rows.map(runEventFromRow);
    },

    async dueLeases(now, limit): Promise<DueLease[]> {
      const rows = await read<{ id: string; run_id: string; lease_expires_at: Date }>(
        "dueLeases",
        `SELECT id, run_id, lease_expires_at FROM attempts
         WHERE lease_expires_at IS NOT NULL AND lease_expires_at <= $1 ORDER BY lease_expires_at LIMIT $2`,
        [toTime(now), limit],
      );
      return rows.map((r) => ({
        attemptId: r.id,
        runId: r.run_id,
        leaseExpiresAt: fromTime(r.lease_expires_at),
      }));
    },

    async runStats() {
      const rows = await read<{ status: RunStatus; n: number }>(
        "runStats",
        "SELECT status, count(*) AS n FROM runs GROUP BY status",
      );
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    },
  };
}
