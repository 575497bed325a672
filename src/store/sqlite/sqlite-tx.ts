import type { Effect, Job, JobEvent, JobKey } from "../../core/model.js";
import type { StoreTx } from "../store.js";
import type { SqliteDb, SqliteStatement } from "./sqlite-driver.js";
import { createSqliteLifecycleTx } from "./sqlite-lifecycle.js";
import {
  type EffectRow,
  effectFromRow,
  effectParams,
  eventParams,
  type JobRow,
  jobFromRow,
  jobParams,
} from "./sqlite-rows.js";
import { createSqliteRunTx } from "./sqlite-run-tx.js";

const JOB_COLUMNS =
  "provider, id, kind, state, version, max_seq, max_update_time, submitted_at, updated_at, settled_at, settled_by, registered, poll_attempts, next_check_at, stuck, conflict, anomaly, last_poll_error, metadata, result, error";
// Never changed by an update; leaving them out of SET spares SQLite rewriting the unique key's index.
const MUTABLE_JOB_COLUMNS = JOB_COLUMNS.split(", ")
  .filter((c) => c !== "provider" && c !== "id" && c !== "submitted_at")
  .join(", ");
const EFFECT_COLUMNS =
  "id, provider, job_id, name, idempotency_key, trigger, status, attempts, next_attempt_at, lease_until, last_error, created_at, delivered_at";

const named = (columns: string) =>
  columns
    .split(", ")
    .map((c) => `@${c}`)
    .join(", ");
const assignments = (columns: string) =>
  columns
    .split(", ")
    .map((c) => `${c} = @${c}`)
    .join(", ");

/** Prepared once per connection; better-sqlite3 statements are synchronous and cheap to reuse. */
export function prepareWriteStatements(db: SqliteDb): Record<WriteStatementName, SqliteStatement> {
  return {
    recordDelivery: db.prepare(
      "INSERT INTO deliveries (provider, delivery_id, received_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
    ),
    getJob: db.prepare("SELECT * FROM jobs WHERE provider = ? AND id = ?"),
    insertJob: db.prepare(
      `INSERT INTO jobs (${JOB_COLUMNS}) VALUES (${named(JOB_COLUMNS)}) ON CONFLICT DO NOTHING`,
    ),
    updateJob: db.prepare(
      `UPDATE jobs SET ${assignments(MUTABLE_JOB_COLUMNS)} WHERE provider = @provider AND id = @id AND version = @expected_version`,
    ),
    appendEvent: db.prepare(
      "INSERT INTO events (provider, job_id, source, raw_state, state, applied, reason, delivery_id, dedupe_key, at, detail) VALUES (@provider, @job_id, @source, @raw_state, @state, @applied, @reason, @delivery_id, @dedupe_key, @at, @detail) ON CONFLICT DO NOTHING",
    ),
    enqueueEffect: db.prepare(
      `INSERT INTO outbox (${EFFECT_COLUMNS}) VALUES (${named(EFFECT_COLUMNS)}) ON CONFLICT DO NOTHING`,
    ),
    getEffect: db.prepare("SELECT * FROM outbox WHERE id = ?"),
    updateEffect: db.prepare(`UPDATE outbox SET ${assignments(EFFECT_COLUMNS)} WHERE id = @id`),
  };
}

type WriteStatementName =
  | "recordDelivery"
  | "getJob"
  | "insertJob"
  | "updateJob"
  | "appendEvent"
  | "enqueueEffect"
  | "getEffect"
  | "updateEffect";
export type WriteStatements = Record<WriteStatementName, SqliteStatement>;

/** The StoreTx over one open SQLite write transaction. Every call runs synchronously. */
export function createSqliteTx(db: SqliteDb, s: WriteStatements): StoreTx {
  return {
    ...createSqliteRunTx(db),
    ...createSqliteLifecycleTx(db),
    async recordDelivery(provider, deliveryId, now) {
      return s.recordDelivery.run(provider, deliveryId, now).changes === 1;
    },
    async getJob(key: JobKey) {
      const row = s.getJob.get(key.provider, key.id) as JobRow | undefined;
      return row ? jobFromRow(row) : null;
    },
    async insertJob(job: Job) {
      return s.insertJob.run(jobParams(job)).changes === 1;
    },
    async updateJob(job: Job, expectedVersion: number) {
      return s.updateJob.run({ ...jobParams(job), expected_version: expectedVersion }).changes === 1;
    },
    async appendEvent(event: Omit<JobEvent, "seqNo">) {
      return s.appendEvent.run(eventParams(event)).changes === 1;
    },
    async enqueueEffect(effect: Effect) {
      return s.enqueueEffect.run(effectParams(effect)).changes === 1;
    },
    async getEffect(id: string) {
      const row = s.getEffect.get(id) as EffectRow | undefined;
      return row ? effectFromRow(row) : null;
    },
    async updateEffect(effect: Effect) {
      s.updateEffect.run(effectParams(effect));
    },
    async execute(sql: string, params: readonly unknown[] = []) {
      const statement = db.prepare(sql);
      if (statement.reader) return statement.all(...params) as Record<string, unknown>[];
      statement.run(...params);
      return [];
    },
  };
}
