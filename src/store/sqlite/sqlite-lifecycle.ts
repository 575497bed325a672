import { checkStorableJobKey } from "../../core/job-id.js";
import type { JobKey, Observation } from "../../core/model.js";
import { parkedPage } from "../keyset-page.js";
import {
  effectsFiredHash,
  type FiredEffect,
  jobRegisteredMeanwhile,
  type LifecycleReads,
  type LifecycleStoreTx,
  type ParkedObservation,
  type ParkedQuery,
} from "../lifecycle-store.js";
import type { Page } from "../store.js";
import { PARKED, type ParkedRow, type Row, TOMBSTONES } from "../tables.js";
import type { SqliteDb } from "./sqlite-driver.js";
import { readSqlitePage } from "./sqlite-page.js";

const { fromRow: tombstoneFromRow } = TOMBSTONES.sqlite;
const { fromRow: parkedFromRow, insert: PARKED_INSERT, params: parkedParams } = PARKED.sqlite;

const GET_TOMBSTONE = "SELECT * FROM tombstones WHERE provider = ? AND id = ?";

/** Tombstones and parked observations inside one write transaction (single writer: no races). */
export function createSqliteLifecycleTx(db: SqliteDb): LifecycleStoreTx {
  const s = {
    getTombstone: db.prepare(GET_TOMBSTONE),
    park: db.prepare(`INSERT INTO parked ${PARKED_INSERT} ON CONFLICT DO NOTHING`),
    take: db.prepare("DELETE FROM parked WHERE provider = ? AND job_id = ? RETURNING *"),
    // Every new job asks, and almost none has anything parked: a read is ~4× cheaper than the
    // DELETE (which opens the table and its three indexes for writing even to delete nothing).
    anyParked: db.prepare("SELECT 1 FROM parked WHERE provider = ? AND job_id = ? LIMIT 1"),
    jobExists: db.prepare("SELECT 1 FROM jobs WHERE provider = ? AND id = ?"),
  };
  return {
    async getTombstone(key: JobKey) {
      const row = s.getTombstone.get(key.provider, key.id) as Row | undefined;
      return row ? tombstoneFromRow(row) : null;
    },
    async parkObservation(observation: Observation, now: number) {
      checkStorableJobKey(observation);
      const { provider, id } = observation;
      // One writer: only this very transaction can have written the job since it was read.
      if (s.jobExists.get(provider, id) !== undefined) throw jobRegisteredMeanwhile(provider, id);
      const row = parkedParams({
        provider,
        id,
        deliveryId: observation.deliveryId ?? null,
        parkedAt: now,
        observation,
      });
      return s.park.run(row).changes === 1;
    },
    async takeParked(key: JobKey) {
      if (s.anyParked.get(key.provider, key.id) === undefined) return [];
      const rows = s.take.all(key.provider, key.id) as ParkedRow[];
      // RETURNING promises no order.
      return rows.map(parkedFromRow).sort((a, b) => a.parkedNo - b.parkedNo);
    },
  };
}

export function createSqliteLifecycleReads(reader: SqliteDb, assertOpen: () => void): LifecycleReads {
  const getTombstone = reader.prepare(GET_TOMBSTONE);
  return {
    async getTombstone(key: JobKey) {
      assertOpen();
      const row = getTombstone.get(key.provider, key.id) as Row | undefined;
      return row ? tombstoneFromRow(row) : null;
    },
    async listParked(query: ParkedQuery): Promise<Page<ParkedObservation>> {
      assertOpen();
      return readSqlitePage(reader, parkedPage(query), parkedFromRow);
    },
  };
}

/**
 * Writes the tombstones of the jobs a prune batch is about to delete, in its transaction: the
 * key, the terminal state, when it settled, and the hash of its outbox rows (still there:
 * delivered effects are pruned after their job, by settled_at <= delivered_at). `jobs` are the
 * batch's rows: job_no, provider, id, state, settled_at.
 */
export function writeTombstones(db: SqliteDb, jobs: readonly unknown[][], maxParameters: number): void {
  // The batch's outbox rows in as few statements as the store binds parameters for.
  const fired = new Map<unknown, FiredEffect[]>();
  for (let start = 0; start < jobs.length; start += maxParameters) {
    const jobNos = jobs.slice(start, start + maxParameters).map((job) => job[0]);
    const rows = db
      .prepare(
        `SELECT j.job_no, o.name, o.trigger, o.idempotency_key FROM jobs j
         JOIN outbox o ON o.provider = j.provider AND o.job_id = j.id
         WHERE j.job_no IN (${jobNos.map(() => "?").join(", ")})`,
      )
      .raw()
      .all(...jobNos) as [unknown, string, string, string][];
    for (const [jobNo, name, trigger, idempotencyKey] of rows) {
      const list = fired.get(jobNo) ?? [];
      list.push({ name, trigger, idempotencyKey });
      fired.set(jobNo, list);
    }
  }
  const insert = db.prepare(
    `INSERT INTO tombstones (provider, id, state, settled_at, effects_hash) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (provider, id) DO UPDATE SET state = excluded.state, settled_at = excluded.settled_at,
       effects_hash = excluded.effects_hash`,
  );
  for (const [jobNo, provider, id, state, settledAt] of jobs) {
    insert.run(provider, id, state, settledAt, effectsFiredHash(fired.get(jobNo) ?? []));
  }
}
