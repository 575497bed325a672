import { FinalityError } from "../../core/errors.js";
import type { Effect, Job, JobEvent, JobKey } from "../../core/model.js";
import { withAfterCommit } from "../after-commit.js";
import { clampLimit } from "../json-column.js";
import { effectsPage, jobsPage } from "../keyset-page.js";
import type { AdapterTx, EffectOutcome, EffectQuery, JobQuery, Page, Store, StoreStats } from "../store.js";
import { EFFECTS, JOBS } from "../tables.js";
import type { SqliteDb } from "./sqlite-driver.js";
import { createSqliteHousekeeping, type SqliteSpace } from "./sqlite-housekeeping.js";
import { createSqliteIntentReads } from "./sqlite-intents.js";
import { createSqliteLatencyReads } from "./sqlite-latency-reads.js";
import { createSqliteLifecycleReads } from "./sqlite-lifecycle.js";
import { createSqliteOverviewReads } from "./sqlite-overview-reads.js";
import { readSqlitePage } from "./sqlite-page.js";
import { type EventRow, effectFromRow, eventFromRow, type JobRow, jobFromRow } from "./sqlite-rows.js";
import { createSqliteRunReads } from "./sqlite-run-reads.js";
import { createSqliteSettlements } from "./sqlite-settlements.js";

/** How one SQLite database is reached: by better-sqlite3 files on Node, by a Durable Object on Workers. */
interface SqliteStoreParts {
  /** The connection that writes; `transaction` runs its work on it. */
  writer: SqliteDb;
  /** Reads that need not see a transaction in progress (the writer itself where there is one connection). */
  reader: SqliteDb;
  /** Runs `work` in one write transaction on `writer` and resolves after its commit (see Store). */
  transaction<T>(work: (tx: AdapterTx) => Promise<T>): Promise<T>;
  pendingMigrations(): number;
  /** The file's pages (PRAGMAs) when omitted. */
  space?: SqliteSpace;
  /** Most `?` one statement may bind; SQLite's default when omitted. */
  maxParameters?: number;
  /** How often a wait for settlements looks for other processes' commits (1 s). */
  settlementPollMs?: number;
  /** Waits for transactions in flight, then releases the connections. */
  close(): Promise<void>;
}

/** The Store over SQLite: every query here, whatever holds the connection. */
export function createSqliteStoreFrom(parts: SqliteStoreParts): Store {
  const { writer, reader } = parts;
  let closed = false;
  // The dispatcher reads one job and one claim per delivery: rows as arrays of named columns, so
  // better-sqlite3 builds no object keyed by column (each key a slow property store) for a row
  // read once; `?` bound by position, not `@name` (SqliteMapping's hot-path forms).
  const read = {
    job: reader.prepare(`SELECT ${JOBS.sqlite.selectList} FROM jobs WHERE provider = ? AND id = ?`).raw(true),
    events: reader.prepare(
      "SELECT * FROM events WHERE provider = ? AND job_id = ? AND event_no > ? ORDER BY event_no LIMIT ?",
    ),
    effect: reader.prepare(`SELECT ${EFFECTS.sqlite.selectList} FROM outbox WHERE id = ?`).raw(true),
  };
  const claim = {
    effects: writer
      .prepare(
        `UPDATE outbox SET status = 'delivering', attempts = attempts + 1, lease_until = ?
       WHERE effect_no IN (
         SELECT effect_no FROM outbox WHERE status = 'pending' AND next_attempt_at <= ?
         UNION ALL
         SELECT effect_no FROM outbox WHERE status = 'delivering' AND lease_until <= ?
         LIMIT ?)
       RETURNING ${EFFECTS.sqlite.selectList}`,
      )
      .raw(true),
    finish: writer.prepare(
      `UPDATE outbox SET status = ?, next_attempt_at = ?, lease_until = NULL, last_error = ?, delivered_at = ?
       WHERE id = ? AND status = 'delivering' AND lease_until = ?`,
    ),
    extend: writer.prepare(
      "UPDATE outbox SET lease_until = ? WHERE id = ? AND status = 'delivering' AND lease_until = ?",
    ),
  };

  function assertOpen(): void {
    if (closed) throw new FinalityError("shutting-down", "the store is closed");
  }
  const settlements = createSqliteSettlements(reader, assertOpen, parts.settlementPollMs);

  return {
    ...createSqliteRunReads(reader, assertOpen),
    ...createSqliteOverviewReads(reader, assertOpen),
    ...createSqliteLatencyReads(reader, assertOpen),
    ...createSqliteLifecycleReads(reader, assertOpen),
    ...settlements.reads,
    ...createSqliteIntentReads(reader, assertOpen),
    ...createSqliteHousekeeping(
      writer,
      reader,
      (work) => parts.transaction(work),
      parts.space,
      parts.maxParameters,
    ),
    dialect: "sqlite",

    transaction(work) {
      if (closed) return Promise.reject(new FinalityError("shutting-down", "the store is closed"));
      return withAfterCommit(async (adapterWork) => {
        const value = await parts.transaction(adapterWork);
        // A settlement's feed row is a trigger's: any commit may have added one.
        settlements.committed();
        return value;
      }, work);
    },

    async getJob(key: JobKey) {
      assertOpen();
      const row = read.job.get(key.provider, key.id) as unknown[] | undefined;
      return row ? JOBS.sqlite.fromValues(row) : null;
    },

    async listJobs(query: JobQuery): Promise<Page<Job>> {
      assertOpen();
      return readSqlitePage(reader, jobsPage(query, "sqlite"), jobFromRow);
    },

    async jobEvents(key: JobKey, page = {}): Promise<JobEvent[]> {
      assertOpen();
      const rows = read.events.all(
        key.provider,
        key.id,
        page.after ?? 0,
        clampLimit(page.limit, 1000, 10_000),
      );
      return (rows as EventRow[]).map(eventFromRow);
    },

    async getEffect(id: string) {
      assertOpen();
      const row = read.effect.get(id) as unknown[] | undefined;
      return row ? EFFECTS.sqlite.fromValues(row) : null;
    },

    async listEffects(query: EffectQuery): Promise<Page<Effect>> {
      assertOpen();
      return readSqlitePage(reader, effectsPage(query), effectFromRow);
    },

    claimEffects(now, limit, leaseMs) {
      return this.transaction(async () => {
        const rows = claim.effects.all(now + leaseMs, now, now, limit) as unknown[][];
        return rows.map(EFFECTS.sqlite.fromValues);
      });
    },

    finishEffect(outcome: EffectOutcome) {
      return this.transaction(async () => {
        const delivered = outcome.kind === "delivered";
        const changed = claim.finish.run(
          delivered ? "delivered" : outcome.kind === "dead" ? "dead" : "pending",
          outcome.kind === "retry" ? outcome.nextAttemptAt : outcome.at,
          delivered ? null : outcome.error,
          delivered ? outcome.at : null,
          outcome.id,
          outcome.claimedUntil,
        ).changes;
        return changed === 1;
      });
    },

    extendEffectLease(id, claimedUntil, leaseUntil) {
      return this.transaction(async () => {
        return claim.extend.run(leaseUntil, id, claimedUntil).changes === 1;
      });
    },

    claimDueJobs(now, limit, leaseUntil, providers) {
      return this.transaction(async () => {
        // `+provider` keeps the planner on the partial due index: the provider index would scan
        // every job of the provider, settled ones included.
        const filter = providers?.length ? `AND +provider IN (${providers.map(() => "?").join(", ")})` : "";
        // Oldest due first; UPDATE … RETURNING promises no order, so pick the rows, then update them.
        const picked = writer
          .prepare(
            `SELECT job_no FROM jobs WHERE next_check_at IS NOT NULL AND next_check_at <= ? ${filter}
             ORDER BY next_check_at LIMIT ?`,
          )
          .pluck()
          .all(now, ...(providers ?? []), limit) as number[];
        if (picked.length === 0) return [];
        const rows = writer
          .prepare(
            `UPDATE jobs SET next_check_at = ? WHERE job_no IN (${picked.map(() => "?").join(", ")}) RETURNING *`,
          )
          .all(leaseUntil, ...picked) as JobRow[];
        const order = new Map(picked.map((jobNo, index) => [jobNo, index]));
        rows.sort((a, b) => (order.get(a.job_no) ?? 0) - (order.get(b.job_no) ?? 0));
        return rows.map(jobFromRow);
      });
    },

    async hasDelivery(provider: string, deliveryId: string) {
      assertOpen();
      return (
        reader
          .prepare("SELECT 1 FROM deliveries WHERE provider = ? AND delivery_id = ?")
          .get(provider, deliveryId) !== undefined
      );
    },

    async ready() {
      if (closed) return false;
      try {
        return parts.pendingMigrations() === 0;
      } catch {
        return false;
      }
    },

    async stats(now: number): Promise<StoreStats> {
      assertOpen();
      // Kept by triggers (migration 0005): a few rows, however many jobs are stored.
      const counts = (table: string) =>
        Object.fromEntries(
          (
            reader.prepare("SELECT key, n FROM row_counts WHERE tbl = ? AND n > 0").all(table) as {
              key: string;
              n: number;
            }[]
          ).map((r) => [r.key, r.n]),
        );
      const one = (sql: string, ...params: unknown[]) =>
        (reader.prepare(sql).get(...params) as { n: number | null }).n;
      const jobsByState = counts("jobs");
      return {
        jobsByState,
        openJobs: (jobsByState.pending ?? 0) + (jobsByState.running ?? 0),
        stuckJobs: one("SELECT count(*) AS n FROM jobs WHERE stuck = 1") ?? 0,
        conflictJobs: one("SELECT count(*) AS n FROM jobs WHERE conflict = 1") ?? 0,
        effectsByStatus: counts("outbox"),
        oldestOpenSubmittedAt: one("SELECT min(submitted_at) AS n FROM jobs WHERE settled_at IS NULL"),
        dueJobs:
          one("SELECT count(*) AS n FROM jobs WHERE next_check_at IS NOT NULL AND next_check_at <= ?", now) ??
          0,
      };
    },

    async close() {
      if (closed) return;
      closed = true;
      settlements.close();
      await parts.close();
    },
  };
}
