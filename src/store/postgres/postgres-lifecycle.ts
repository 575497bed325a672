import { checkStorableJobKey } from "../../core/job-id.js";
import type { JobKey, Observation } from "../../core/model.js";
import { keysetPage, keysetStatement, parkedPage } from "../keyset-page.js";
import {
  effectsFiredHash,
  jobRegisteredMeanwhile,
  type LifecycleReads,
  type LifecycleStoreTx,
  type ParkedObservation,
  type ParkedQuery,
} from "../lifecycle-store.js";
import type { Page } from "../store.js";
import { PARKED, type ParkedRow, type Row, TOMBSTONES } from "../tables.js";
import type { TxSql } from "./postgres-client.js";
import { toTime } from "./postgres-rows.js";

/** A statement on one connection (in a transaction, or on the pool for reads). */
export type Query = <T = Record<string, unknown>>(
  text: string,
  values?: readonly unknown[],
) => Promise<T[] & { count: number }>;
type Read = <T>(what: string, text: string, values?: readonly unknown[]) => Promise<T[] & { count: number }>;
/** A bound parameter: node-postgres sends each as text (JSON is cast with `::text::jsonb`). */
type Value = unknown;

const { fromRow: tombstoneFromRow } = TOMBSTONES.postgres;
const { fromRow: parkedFromRow, insert: PARKED_INSERT, values: parkedValues } = PARKED.postgres;

const GET_TOMBSTONE = "SELECT * FROM tombstones WHERE provider = $1 AND id = $2";
// Parking and taking a job's parked rows queue on one lock per job key: under READ COMMITTED a
// registration would otherwise miss a row parked by a transaction that commits just after its
// DELETE, and that completion would wait in the inbox until it expired.
const LOCK_KEY = "SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 0))";

export function createPostgresLifecycleTx(tx: TxSql): LifecycleStoreTx {
  const run: Query = (text, values = []) => tx.unsafe(text, values as Value[], { prepare: true }) as never;
  return {
    async getTombstone(key: JobKey) {
      const [row] = await run<Row>(GET_TOMBSTONE, [key.provider, key.id]);
      return row ? tombstoneFromRow(row) : null;
    },
    async parkObservation(observation: Observation, now: number) {
      checkStorableJobKey(observation);
      const { provider, id } = observation;
      await run(LOCK_KEY, [provider, id]);
      // A registration that committed after this transaction first read the job: run again, so
      // that the observation goes through the reducer instead of into the inbox.
      if ((await run("SELECT 1 FROM jobs WHERE provider = $1 AND id = $2", [provider, id])).length > 0) {
        throw jobRegisteredMeanwhile(provider, id);
      }
      const inserted = await run(
        `INSERT INTO parked ${PARKED_INSERT} ON CONFLICT DO NOTHING`,
        parkedValues({
          provider,
          id,
          deliveryId: observation.deliveryId ?? null,
          parkedAt: now,
          observation,
        }),
      );
      return inserted.count === 1;
    },
    async takeParked(key: JobKey) {
      // The lock above, then the DELETE, in one round trip (migration 0012 says why a function).
      const rows = await run<ParkedRow>("SELECT * FROM take_parked($1, $2)", [key.provider, key.id]);
      return rows.map(parkedFromRow).sort((a, b) => a.parkedNo - b.parkedNo);
    },
  };
}

export function createPostgresLifecycleReads(read: Read): LifecycleReads {
  return {
    async getTombstone(key: JobKey) {
      const [row] = await read<Row>("getTombstone", GET_TOMBSTONE, [key.provider, key.id]);
      return row ? tombstoneFromRow(row) : null;
    },
    async listParked(query: ParkedQuery): Promise<Page<ParkedObservation>> {
      const { text, values, limit } = keysetStatement(parkedPage(query), "postgres");
      const rows = await read<ParkedRow>("listParked", text, values);
      return keysetPage(rows, limit, parkedFromRow, (row) => row.parked_no);
    },
  };
}

/**
 * One batch of settled jobs in one transaction: lock them (skipping any another transaction
 * holds), write their tombstones with the hash of their outbox rows, delete them. `doomed` is
 * the SELECT of the jobs' job_no, provider, id, state and settled_at as `j` ($1: before), oldest first.
 */
export async function pruneSettledJobs(
  q: Query,
  doomed: string,
  before: number,
  limit: number,
): Promise<number> {
  type Doomed = { job_no: number; provider: string; id: string; state: string; settled_at: Date };
  const jobs = await q<Doomed>(`${doomed} LIMIT $2 FOR UPDATE OF j SKIP LOCKED`, [toTime(before), limit]);
  if (jobs.length === 0) return 0;
  const providers = jobs.map((j) => j.provider);
  const ids = jobs.map((j) => j.id);
  type Fired = { provider: string; job_id: string; name: string; trigger: string; idempotency_key: string };
  const fired = await q<Fired>(
    `SELECT o.provider, o.job_id, o.name, o.trigger, o.idempotency_key FROM outbox o
     JOIN unnest($1::text[], $2::text[]) AS k(provider, job_id) ON o.provider = k.provider AND o.job_id = k.job_id`,
    [providers, ids],
  );
  const byJob = new Map<string, { name: string; trigger: string; idempotencyKey: string }[]>();
  for (const row of fired) {
    const key = `${row.provider}\u0000${row.job_id}`;
    const list = byJob.get(key) ?? [];
    list.push({ name: row.name, trigger: row.trigger, idempotencyKey: row.idempotency_key });
    byJob.set(key, list);
  }
  await q(
    `INSERT INTO tombstones (provider, id, state, settled_at, effects_hash)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]::timestamptz[], $5::text[])
     ON CONFLICT (provider, id) DO UPDATE SET state = excluded.state, settled_at = excluded.settled_at,
       effects_hash = excluded.effects_hash`,
    [
      providers,
      ids,
      jobs.map((j) => j.state),
      jobs.map((j) => j.settled_at.toISOString()),
      jobs.map((j) => effectsFiredHash(byJob.get(`${j.provider}\u0000${j.id}`) ?? [])),
    ],
  );
  const deleted = await q("DELETE FROM jobs WHERE job_no = ANY($1::bigint[])", [jobs.map((j) => j.job_no)]);
  return deleted.count;
}
