import { checkStorableJobKey } from "../../core/job-id.js";
import type { Effect, IgnoreReason, Job, JobEvent, JobKey, Observation } from "../../core/model.js";
import type { AdapterTx, IngestedAtOnce, IngestPlan, JobWritten } from "../store.js";
import { EFFECTS, EVENTS, JOBS, PARKED, type ParkedRow, TOMBSTONES } from "../tables.js";
import { IN_TRANSACTION, type TxSql } from "./postgres-client.js";
import { createPostgresIntentTx } from "./postgres-intents.js";
import { createPostgresLifecycleTx } from "./postgres-lifecycle.js";
import { shifted } from "./postgres-queries.js";
import {
  type EffectRow,
  effectFromRow,
  effectValues,
  eventValues,
  jobValues,
  toTime,
} from "./postgres-rows.js";
import { createPostgresRunTx } from "./postgres-run-tx.js";
import { jsonValue } from "./postgres-values.js";

// Built once; sent as named prepared statements, so each connection parses them once.
const SQL = {
  recordDelivery:
    "INSERT INTO deliveries (provider, delivery_id, received_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
  // The row lock serialises concurrent ingests of one job under READ COMMITTED: the second waits
  // here, then reads the first one's committed version, so the CAS below does not fail.
  // A job as one json column (JOBS.postgres.selectArray, `AS r`), as finality_ingest answers it.
  getJobForUpdate: `SELECT ${JOBS.postgres.selectArray} AS r FROM jobs WHERE provider = $1 AND id = $2 FOR UPDATE`,
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

const JOB_PARAMS = JOBS.postgres.columns.length;

// Ingest's reads and writes, each in one round trip (StoreTx.loadForIngest, writeJobWithEvent):
// a statement sent alone waits for its answer before the next can go, so fewer statements per
// webhook is fewer round trips. Data-modifying CTEs all run, to the end, whatever the query reads.
const INGEST_SQL = {
  // $1 provider, $2 id, $3 delivery id (null: none), $4 now. The row lock is the one getJob
  // takes; the delivery insert waits on a concurrent insert of the same id as it does alone. A
  // duplicate's job is not answered: read in this statement's snapshot, it may predate the commit
  // the insert waited for (ingest reads it again). Sent with its transaction's BEGIN (withBegin),
  // so it records nothing outside that transaction (IN_TRANSACTION).
  load: `WITH recorded AS (
      INSERT INTO deliveries (provider, delivery_id, received_at)
        SELECT $1, $3::text, $4::timestamptz WHERE $3::text IS NOT NULL AND ${IN_TRANSACTION}
        ON CONFLICT DO NOTHING RETURNING 1
    ), job AS (SELECT * FROM jobs WHERE provider = $1 AND id = $2 FOR UPDATE)
    SELECT (SELECT count(*) FROM recorded)::int AS finality_recorded,
      CASE WHEN job.provider IS NULL THEN NULL ELSE ${JOBS.postgres.selectArrayOf("job")} END AS r
    FROM (SELECT 1) AS one LEFT JOIN job ON true`,
  // Job $1..$n, then the event. The tombstone is read first, in this statement's snapshot, taken
  // after the load's wait for the row: a prune that committed meanwhile is seen (getTombstone);
  // with one, nothing is written and the tombstone is answered. take_parked (migration 0012) as
  // takeParked calls it, once the job is in: its advisory lock and its DELETE's own snapshot are
  // what keep a concurrent parker from being missed.
  insertWithEvent: `WITH pruned AS (SELECT * FROM tombstones WHERE provider = $1 AND id = $2),
      written AS (
        INSERT INTO jobs (${JOBS.postgres.columns.join(", ")})
        SELECT ${JOBS.postgres.valueList} WHERE NOT EXISTS (SELECT 1 FROM pruned)
        ON CONFLICT DO NOTHING RETURNING 1
      ),
      event AS (
        INSERT INTO events (${EVENTS.postgres.columns.join(", ")})
        SELECT ${shifted(EVENTS.postgres.valueList, JOB_PARAMS)} WHERE NOT EXISTS (SELECT 1 FROM pruned)
        ON CONFLICT (dedupe_key) DO NOTHING
      ),
      taken AS (SELECT p.* FROM written, LATERAL take_parked($1, $2) AS p)
    SELECT (SELECT count(*) FROM written)::int AS written, pruned.state AS finality_pruned_state,
      pruned.settled_at AS finality_pruned_settled_at, pruned.effects_hash AS finality_pruned_effects_hash, taken.*
    FROM (SELECT 1) AS one LEFT JOIN pruned ON true LEFT JOIN taken ON true`,
  // A redelivery's event, then its job: the read's snapshot is taken after the load's wait for the
  // first delivery's commit, so it sees that delivery's job (getJob's lock and all).
  eventThenJob: `WITH event AS (${SQL.appendEvent}) ${shifted(SQL.getJobForUpdate, EVENTS.postgres.columns.length)}`,
  updateWithEvent: `WITH written AS (${SQL.updateJob} RETURNING 1),
      event AS (${shifted(SQL.appendEvent, JOB_PARAMS + 1)})
    SELECT count(*)::int AS written FROM written`,
} as const;

// The same writes as the last statement of their transaction, its COMMIT right behind them
// (TxSql.commitsAhead): what the caller would have checked in the answer is checked here, by
// finality_expect (migration 0013), whose error aborts the transaction. An insert answers only
// "written": a tombstone, a concurrent insert or parked observations, each of which asks for
// more work in the transaction, fail it instead, and the caller runs it again the ordinary way.
const LAST_SQL = {
  updateWithEvent: `WITH written AS (${SQL.updateJob} RETURNING 1),
      event AS (${shifted(SQL.appendEvent, JOB_PARAMS + 1)})
    SELECT finality_expect(count(*) = 1, 'the job changed concurrently') AS written FROM written`,
  insertWithEvent: `${INGEST_SQL.insertWithEvent.slice(0, INGEST_SQL.insertWithEvent.lastIndexOf("SELECT (SELECT count(*) FROM written)"))}SELECT finality_expect((SELECT count(*) FROM written) = 1 AND NOT EXISTS (SELECT 1 FROM taken),
      'the job was pruned, inserted concurrently or has parked observations') AS written`,
} as const;

// StoreTx.ingestAtOnce: migration 0014's finality_ingest, the whole ingest, sent with BEGIN and
// the COMMIT in one write (withBegin, last: it writes nothing outside its transaction, and raises
// FNL01 on every outcome that asks for more work).
const AT_ONCE_CALL = `finality_ingest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::text::jsonb, $13, $14::text::jsonb,
    $15, $16, $17::text::jsonb, $18::text::jsonb, $19::text::jsonb, $20) AS r`;
// The job as one json column (JOBS.postgres.selectArrayOf), not its ~24: node-postgres describes
// every column of an answer on each execution and builds each row as an object keyed by column
// (bench/README.md, "PostgreSQL: one column per row read"). NULL when the function wrote no job.
const AT_ONCE_SQL = `SELECT r.finality_applied, r.finality_reason, r.finality_effects,
    CASE WHEN (r.job).provider IS NULL THEN NULL ELSE ${JOBS.postgres.selectArrayOf("(r.job)")} END AS r
  FROM ${AT_ONCE_CALL}`;
// IngestPlan.withoutJob: no job in the answer at all.
const AT_ONCE_NO_JOB_SQL = `SELECT r.finality_applied, r.finality_reason, r.finality_effects FROM ${AT_ONCE_CALL}`;

/** A job read as one json column (`r`), or none (absent: a statement that asks for none). */
type JobArrayRow = { r?: readonly unknown[] | null };
const jobOf = (row: JobArrayRow | undefined): Job | null =>
  row?.r === undefined || row.r === null ? null : JOBS.postgres.fromArray(row.r);
type LoadRow = JobArrayRow & { finality_recorded: number };
type AtOnceRow = JobArrayRow & {
  finality_applied: boolean;
  finality_reason: IgnoreReason | null;
  finality_effects: string[];
};
type InsertRow = ParkedRow & {
  written: number;
  finality_pruned_state: string | null;
  finality_pruned_settled_at: unknown;
  finality_pruned_effects_hash: unknown;
};
const { fromRow: parkedFromRow } = PARKED.postgres;
const { fromRow: tombstoneFromRow } = TOMBSTONES.postgres;

/** What the schema this store found can do, beyond what every supported schema does. */
export interface PostgresSchemaFeatures {
  /** Migration 0019: `finality_ingest` writes a row planned with a lease claimed. */
  claimsAtOnce?: boolean;
}

// Our parameters are strings, numbers, booleans, Dates and null, all of which node-postgres serialises.
/** A bound parameter: node-postgres sends each as text (JSON is cast with `::text::jsonb`). */
type Value = unknown;

/** The StoreTx (but afterCommit) over one open READ COMMITTED transaction on one pooled connection. */
export function createPostgresTx(tx: TxSql, schema: PostgresSchemaFeatures = {}): AdapterTx {
  const run = <T = Record<string, unknown>>(text: string, values: readonly unknown[]) =>
    tx.unsafe(text, values as Value[], { prepare: true }) as unknown as Promise<T[] & { count: number }>;

  async function ingestAtOnce(obs: Observation, plan: IngestPlan, last = true): Promise<IngestedAtOnce> {
    checkStorableJobKey(obs);
    const values = [
      obs.provider,
      obs.id,
      obs.deliveryId ?? null,
      toTime(plan.now),
      obs.state,
      obs.source,
      obs.rawState ?? null,
      obs.kind ?? null,
      obs.seq ?? null,
      obs.updateTime ?? null,
      obs.result !== undefined,
      jsonValue(obs.result),
      obs.error !== undefined,
      jsonValue(obs.error),
      plan.adopt,
      toTime(plan.nextCheckAt),
      // Kept only when the job is unknown under registered-only: parked, as parkObservation keeps it.
      plan.adopt ? null : jsonValue(obs),
      jsonValue(plan.detail),
      // The rows as the outbox stores them, but the job's (provider, id, trigger, times) and
      // traceparent, which every row of one ingest shares; a row claimed on enqueue with its lease
      // (migration 0019).
      JSON.stringify(
        plan.effects.map(({ row, kinds }) =>
          row.leaseUntil === null
            ? { id: row.id, name: row.name, key: row.idempotencyKey, kinds }
            : {
                id: row.id,
                name: row.name,
                key: row.idempotencyKey,
                kinds,
                leaseUntil: toTime(row.leaseUntil),
              },
        ),
      ),
      plan.effects[0]?.row.traceParent ?? null,
    ];
    const [row] = await tx.unsafe<AtOnceRow>(plan.withoutJob ? AT_ONCE_NO_JOB_SQL : AT_ONCE_SQL, values, {
      prepare: true,
      withBegin: true,
      last,
    });
    if (row === undefined) throw new Error("unreachable: finality_ingest answers one row");
    return {
      applied: row.finality_applied,
      reason: row.finality_reason,
      job: jobOf(row),
      effects: row.finality_effects,
    };
  }

  // Object.assign onto the first part, not spreads into a new literal: a spread of another
  // factory's object copies it property by property in V8's runtime (~28,000 instructions per
  // transaction, bench/README.md "Runs: the server's instructions per run"). Later parts win, as
  // later spreads did.
  const own = {
    async recordDelivery(provider, deliveryId, now) {
      return (await run(SQL.recordDelivery, [provider, deliveryId, toTime(now)])).count === 1;
    },
    async getJob(key: JobKey) {
      const [row] = await run<JobArrayRow>(SQL.getJobForUpdate, [key.provider, key.id]);
      return jobOf(row);
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
    async loadForIngest(key: JobKey, deliveryId: string | undefined, now: number) {
      const values = [key.provider, key.id, deliveryId ?? null, toTime(now)];
      const [row] = (await tx.unsafe(INGEST_SQL.load, values, {
        prepare: true,
        withBegin: true,
      })) as LoadRow[];
      if (row === undefined) throw new Error("unreachable: the ingest load answers one row");
      const duplicate = deliveryId !== undefined && row.finality_recorded === 0;
      return { duplicate, job: duplicate ? null : jobOf(row) };
    },
    async writeJobWithEvent(
      current: Job | null,
      next: Job,
      event: Omit<JobEvent, "seqNo">,
      last = false,
    ): Promise<JobWritten> {
      if (current === null) checkStorableJobKey(next);
      if (last && tx.commitsAhead) {
        const values = [
          ...jobValues(next),
          ...(current === null ? [] : [current.version]),
          ...eventValues(event),
        ];
        const text = current === null ? LAST_SQL.insertWithEvent : LAST_SQL.updateWithEvent;
        const [row] = await tx.unsafe<{ written: boolean }>(text, values, { prepare: true, last: true });
        // finality_expect raised otherwise (and the COMMIT behind has already gone out).
        if (row?.written !== true) throw new Error("unreachable: finality_expect answers true or fails");
        return current === null ? { written: true, parked: [] } : { written: true };
      }
      if (current !== null) {
        const values = [...jobValues(next), current.version, ...eventValues(event)];
        const [row] = await run<{ written: number }>(INGEST_SQL.updateWithEvent, values);
        return { written: row?.written === 1 };
      }
      const rows = await run<InsertRow>(INGEST_SQL.insertWithEvent, [
        ...jobValues(next),
        ...eventValues(event),
      ]);
      const [first] = rows;
      if (first === undefined) throw new Error("unreachable: the ingest insert answers one row at least");
      if (first.finality_pruned_state !== null) {
        const pruned = tombstoneFromRow({
          provider: next.provider,
          id: next.id,
          state: first.finality_pruned_state,
          settled_at: first.finality_pruned_settled_at,
          effects_hash: first.finality_pruned_effects_hash,
        });
        return { written: false, pruned };
      }
      const parked = rows.filter((row) => row.parked_no !== null).map(parkedFromRow);
      return { written: first.written === 1, parked: parked.sort((a, b) => a.parkedNo - b.parkedNo) };
    },
    async appendEventAndGetJob(event: Omit<JobEvent, "seqNo">, key: JobKey, last = false) {
      // Neither the event's answer nor the job's can fail the work: it may be the last statement.
      const options = { prepare: true, last: last && tx.commitsAhead };
      const values = [...eventValues(event), key.provider, key.id];
      const [row] = await tx.unsafe<JobArrayRow>(INGEST_SQL.eventThenJob, values as Value[], options);
      return jobOf(row);
    },
    async enqueueEffect(effect: Effect, last = false) {
      // Its answer (false: the row was there already) fails nothing: it may be the last statement.
      const options = { prepare: true, last: last && tx.commitsAhead };
      return (await tx.unsafe(SQL.enqueueEffect, effectValues(effect) as Value[], options)).count === 1;
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
    // Last: every key after a spread in a literal costs V8 a runtime call and a new hidden class.
    ...(tx.commitsAhead ? { ingestAtOnce, ingestAtOnceClaims: schema.claimsAtOnce === true } : {}),
  } satisfies Partial<AdapterTx>;
  return Object.assign(
    createPostgresRunTx(tx),
    createPostgresLifecycleTx(tx),
    createPostgresIntentTx(tx),
    own,
  );
}
