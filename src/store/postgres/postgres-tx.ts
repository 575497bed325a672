import { checkStorableJobKey } from "../../core/job-id.js";
import type { Effect, Job, JobEvent, JobKey } from "../../core/model.js";
import type { AdapterTx } from "../store.js";
import { EFFECTS, EVENTS, JOBS } from "../tables.js";
import type { TxSql } from "./postgres-client.js";
import { createPostgresIntentTx } from "./postgres-intents.js";
import { createPostgresLifecycleTx } from "./postgres-lifecycle.js";
import {
  type EffectRow,
  effectFromRow,
  effectValues,
  eventValues,
  type JobRow,
  jobFromRow,
  jobValues,
  toTime,
} from "./postgres-rows.js";
import { createPostgresRunTx } from "./postgres-run-tx.js";

// Built once; sent as named prepared statements, so each connection parses them once.
const SQL = {
  recordDelivery:
    "INSERT INTO deliveries (provider, delivery_id, received_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
  // The row lock serialises concurrent ingests of one job under READ COMMITTED: the second waits
  // here, then reads the first one's committed version, so the CAS below does not fail.
  getJobForUpdate: "SELECT * FROM jobs WHERE provider = $1 AND id = $2 FOR UPDATE",
  // A concurrent insert of the same key waits for the first to commit, then does nothing:
  // false makes the engine throw version-conflict and the whole work is run again.
  insertJob: `INSERT INTO jobs ${JOBS.postgres.insert} ON CONFLICT DO NOTHING`,
  updateJob: `UPDATE jobs SET ${JOBS.postgres.assignments} WHERE provider = $1 AND id = $2 AND version = $${JOBS.postgres.columns.length + 1}`,
  appendEvent: `INSERT INTO events ${EVENTS.postgres.insert} ON CONFLICT (dedupe_key) DO NOTHING`,
  enqueueEffect: `INSERT INTO outbox ${EFFECTS.postgres.insert} ON CONFLICT DO NOTHING`,
  // Locked like a job: a retry or replay in this transaction and a dispatcher's claim (SKIP LOCKED)
  // must not both take the row.
  getEffect: "SELECT * FROM outbox WHERE id = $1 FOR UPDATE",
  updateEffect: `UPDATE outbox SET ${EFFECTS.postgres.assignments} WHERE id = $1`,
} as const;

// Our parameters are strings, numbers, booleans, Dates and null, all of which postgres.js serialises.
/** A bound parameter: node-postgres sends each as text (JSON is cast with `::text::jsonb`). */
type Value = unknown;

/** The StoreTx (but afterCommit) over one open READ COMMITTED transaction on one pooled connection. */
export function createPostgresTx(tx: TxSql): AdapterTx {
  const run = <T = Record<string, unknown>>(text: string, values: readonly unknown[]) =>
    tx.unsafe(text, values as Value[], { prepare: true }) as unknown as Promise<T[] & { count: number }>;

  return {
    ...createPostgresRunTx(tx),
    ...createPostgresLifecycleTx(tx),
    ...createPostgresIntentTx(tx),
    async recordDelivery(provider, deliveryId, now) {
      return (await run(SQL.recordDelivery, [provider, deliveryId, toTime(now)])).count === 1;
    },
    async getJob(key: JobKey) {
      const [row] = await run<JobRow>(SQL.getJobForUpdate, [key.provider, key.id]);
      return row ? jobFromRow(row) : null;
    },
    async insertJob(job: Job) {
      // PostgreSQL would store half a surrogate pair as U+FFFD, merging two ids into one row.
      checkStorableJobKey(job);
      return (await run(SQL.insertJob, jobValues(job))).count === 1;
    },
    async updateJob(job: Job, expectedVersion: number) {
      return (await run(SQL.updateJob, [...jobValues(job), expectedVersion])).count === 1;
    },
    async appendEvent(event: Omit<JobEvent, "seqNo">) {
      return (await run(SQL.appendEvent, eventValues(event))).count === 1;
    },
    async enqueueEffect(effect: Effect) {
      return (await run(SQL.enqueueEffect, effectValues(effect))).count === 1;
    },
    async getEffect(id: string) {
      const [row] = await run<EffectRow>(SQL.getEffect, [id]);
      return row ? effectFromRow(row) : null;
    },
    async updateEffect(effect: Effect) {
      await run(SQL.updateEffect, effectValues(effect));
    },
    async execute(text: string, params: readonly unknown[] = []) {
      // Unprepared: ad-hoc SQL from effect definitions should not fill the statement cache. In a
      // savepoint: a failed statement then spoils only itself, so a caller may catch it and go on
      // (as on SQLite) instead of finding the whole transaction aborted at commit.
      const rows = await tx.savepoint((sp) => sp.unsafe(text, params as Value[]));
      return [...rows] as Record<string, unknown>[];
    },
  };
}
