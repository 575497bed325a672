import { checkStorableJobKey } from "../../core/job-id.js";
import type { Effect, Job, JobEvent, JobKey } from "../../core/model.js";
import { perChangedMask } from "../row-mapping.js";
import type { AdapterTx } from "../store.js";
import { EFFECTS, EVENTS, JOBS } from "../tables.js";
import type { SqliteDb, SqliteStatement } from "./sqlite-driver.js";
import { createSqliteIntentTx } from "./sqlite-intents.js";
import { createSqliteLifecycleTx } from "./sqlite-lifecycle.js";
import { type EffectRow, effectFromRow } from "./sqlite-rows.js";
import { createSqliteRunTx } from "./sqlite-run-tx.js";

/** Prepared once per connection; better-sqlite3 statements are synchronous and cheap to reuse. */
export function prepareWriteStatements(db: SqliteDb): Record<WriteStatementName, SqliteStatement> {
  return {
    recordDelivery: db.prepare(
      "INSERT INTO deliveries (provider, delivery_id, received_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
    ),
    // Read once per webhook: raw (an array, no object keyed by column), named columns, not `*`.
    getJob: db.prepare(`SELECT ${JOBS.sqlite.selectList} FROM jobs WHERE provider = ? AND id = ?`).raw(true),
    // Positional `?` on the writes every webhook makes (see SqliteMapping.values).
    insertJob: db.prepare(`INSERT INTO jobs ${JOBS.sqlite.insertPositional} ON CONFLICT DO NOTHING`),
    // Only the columns that change: SQLite rewrites every index over a column in the SET list.
    updateJob: db.prepare(
      `UPDATE jobs SET ${JOBS.sqlite.assignmentsPositional} WHERE provider = ? AND id = ? AND version = ?`,
    ),
    appendEvent: db.prepare(`INSERT INTO events ${EVENTS.sqlite.insertPositional} ON CONFLICT DO NOTHING`),
    enqueueEffect: db.prepare(`INSERT INTO outbox ${EFFECTS.sqlite.insertPositional} ON CONFLICT DO NOTHING`),
    getEffect: db.prepare("SELECT * FROM outbox WHERE id = ?"),
    updateEffect: db.prepare(`UPDATE outbox SET ${EFFECTS.sqlite.assignmentsPositional} WHERE id = ?`),
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
type WriteStatements = Record<WriteStatementName, SqliteStatement>;

/** The StoreTx (but afterCommit) over one open SQLite write transaction. Every call runs synchronously. */
export function createSqliteTx(db: SqliteDb, s: WriteStatements): AdapterTx {
  // One UPDATE per set of columns that moved (a webhook's forward move writes version, seq and
  // times, not the state, its JSON columns or their indexes): prepared on first use.
  const partialUpdate = perChangedMask((mask) =>
    db.prepare(
      `UPDATE jobs SET ${JOBS.sqlite.assignmentsFor(mask)} WHERE provider = ? AND id = ? AND version = ?`,
    ),
  );
  return {
    ...createSqliteRunTx(db),
    ...createSqliteLifecycleTx(db),
    ...createSqliteIntentTx(db),
    async recordDelivery(provider, deliveryId, now) {
      return s.recordDelivery.run(provider, deliveryId, now).changes === 1;
    },
    async getJob(key: JobKey) {
      const row = s.getJob.get(key.provider, key.id) as unknown[] | undefined;
      return row ? JOBS.sqlite.fromValues(row) : null;
    },
    async insertJob(job: Job) {
      checkStorableJobKey(job);
      return s.insertJob.run(...JOBS.sqlite.values(job)).changes === 1;
    },
    async updateJob(job: Job, expectedVersion: number, previous?: Job) {
      const mask = previous === undefined ? -1 : JOBS.sqlite.changedMask(previous, job);
      const partial = mask > 0 ? partialUpdate(mask) : undefined;
      if (partial !== undefined) {
        const values = JOBS.sqlite.maskedChanges(job, mask);
        values.push(job.provider, job.id, expectedVersion);
        return partial.run(...values).changes === 1;
      }
      const values = JOBS.sqlite.changes(job);
      values.push(job.provider, job.id, expectedVersion);
      return s.updateJob.run(...values).changes === 1;
    },
    async appendEvent(event: Omit<JobEvent, "seqNo">) {
      return s.appendEvent.run(...EVENTS.sqlite.values(event)).changes === 1;
    },
    async enqueueEffect(effect: Effect) {
      return s.enqueueEffect.run(...EFFECTS.sqlite.values(effect)).changes === 1;
    },
    async getEffect(id: string) {
      const row = s.getEffect.get(id) as EffectRow | undefined;
      return row ? effectFromRow(row) : null;
    },
    async updateEffect(effect: Effect) {
      const values = EFFECTS.sqlite.changes(effect);
      values.push(effect.id);
      s.updateEffect.run(...values);
    },
    async execute(sql: string, params: readonly unknown[] = []) {
      const statement = db.prepare(sql);
      if (statement.reader) return statement.all(...params) as Record<string, unknown>[];
      statement.run(...params);
      return [];
    },
  };
}
