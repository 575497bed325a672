import type { RunStoreTx } from "../run-store.js";
import { ATTEMPTS, RUN_EVENTS, RUNS } from "../tables.js";
import type { TxSql } from "./postgres-client.js";
import {
  type AttemptRow,
  attemptFromRow,
  attemptValues,
  type RunRow,
  runEventValues,
  runFromRow,
  runValues,
} from "./postgres-rows.js";

const SQL = {
  insertRun: `INSERT INTO runs ${RUNS.postgres.insert} ON CONFLICT DO NOTHING`,
  // Row locks make concurrent writers of one run (claim, callback, sweep) queue instead of
  // failing their compare-and-set; a lock cycle between them is a deadlock that the store retries.
  getRun: "SELECT * FROM runs WHERE id = $1 FOR UPDATE",
  getRunByKey: "SELECT * FROM runs WHERE idempotency_key = $1",
  updateRun: `UPDATE runs SET ${RUNS.postgres.assignments} WHERE id = $1 AND version = $${RUNS.postgres.columns.length + 1}`,
  // SKIP LOCKED: a replica claiming at the same moment takes the next queued run instead of
  // waiting for this one (and then finding it gone).
  pickAny: `SELECT * FROM runs WHERE status = 'queued' AND NOT cancel_requested AND available_at <= $1
            ORDER BY run_no LIMIT 1 FOR UPDATE SKIP LOCKED`,
  pickByKinds: `SELECT * FROM runs WHERE status = 'queued' AND NOT cancel_requested AND available_at <= $1
                AND kind = ANY($2::text[]) ORDER BY run_no LIMIT 1 FOR UPDATE SKIP LOCKED`,
  insertAttempt: `INSERT INTO attempts ${ATTEMPTS.postgres.insert} ON CONFLICT DO NOTHING`,
  getAttempt: "SELECT * FROM attempts WHERE id = $1 FOR UPDATE",
  updateAttempt: `UPDATE attempts SET ${ATTEMPTS.postgres.assignments} WHERE id = $1 AND version = $${ATTEMPTS.postgres.columns.length + 1}`,
  appendRunEvent: `INSERT INTO run_events ${RUN_EVENTS.postgres.insert}
                   ON CONFLICT (dedupe_key) DO NOTHING`,
} as const;

/** A bound parameter: node-postgres sends each as text (JSON is cast with `::text::jsonb`). */
type Value = unknown;

/** The runs part of the PostgreSQL StoreTx, on the transaction's connection. */
export function createPostgresRunTx(tx: TxSql): RunStoreTx {
  const run = <T = Record<string, unknown>>(text: string, values: readonly unknown[]) =>
    tx.unsafe(text, values as Value[], { prepare: true }) as unknown as Promise<T[] & { count: number }>;
  const one = async <R, T>(text: string, values: readonly unknown[], map: (row: R) => T) => {
    const [row] = await run<R>(text, values);
    return row ? map(row) : null;
  };

  return {
    async insertRun(value) {
      return (await run(SQL.insertRun, runValues(value))).count === 1;
    },
    getRun: (id) => one(SQL.getRun, [id], runFromRow),
    getRunByIdempotencyKey: (key) => one(SQL.getRunByKey, [key], runFromRow),
    async updateRun(value, expectedVersion) {
      return (await run(SQL.updateRun, [...runValues(value), expectedVersion])).count === 1;
    },
    async pickClaimableRun(kinds, now) {
      if (kinds !== null && kinds.length === 0) return null;
      const at = new Date(now);
      // Sent with the transaction's BEGIN (one round trip): it only reads (its row lock would end
      // with it), so were BEGIN to fail it changed nothing, and no answer is trusted before BEGIN's.
      const [row] = (await tx.unsafe(
        kinds === null ? SQL.pickAny : SQL.pickByKinds,
        kinds === null ? [at] : [at, [...kinds]],
        { prepare: true, withBegin: true },
      )) as unknown as RunRow[];
      return row ? runFromRow(row) : null;
    },
    async insertAttempt(attempt) {
      return (await run(SQL.insertAttempt, attemptValues(attempt))).count === 1;
    },
    async getAttempt(id) {
      // The first statement of a worker's call: sent with BEGIN, as the claim's pick (a read).
      const [row] = (await tx.unsafe(SQL.getAttempt, [id], {
        prepare: true,
        withBegin: true,
      })) as unknown as AttemptRow[];
      return row ? attemptFromRow(row) : null;
    },
    async updateAttempt(attempt, expectedVersion) {
      return (await run(SQL.updateAttempt, [...attemptValues(attempt), expectedVersion])).count === 1;
    },
    async appendRunEvent(event) {
      return (await run(SQL.appendRunEvent, runEventValues(event))).count === 1;
    },
  };
}
