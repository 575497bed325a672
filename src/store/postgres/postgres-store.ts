import { type Clock, systemClock } from "../../core/clock.js";
import { FinalityError } from "../../core/errors.js";
import type { Effect, Job, JobEvent, JobKey } from "../../core/model.js";
import { withAfterCommit } from "../after-commit.js";
import { clampLimit } from "../json-column.js";
import { keysetPage } from "../keyset-page.js";
import type {
  AdapterTx,
  EffectOutcome,
  EffectQuery,
  JobQuery,
  Page,
  Store,
  StoreStats,
  StoreTx,
  TransactionOptions,
} from "../store.js";
import { EFFECTS, JOBS } from "../tables.js";
import {
  createClient,
  isTransient,
  NOT_LAST,
  POSTGRES_TIMEOUT_DEFAULTS,
  type PoolStats,
  type Sql,
  sqlState,
  toStoreError,
} from "./postgres-client.js";
import { type DatabaseClock, databaseClock, earliestDatabaseNow } from "./postgres-clock.js";
import { createPostgresGroupCommitter, type GroupCommitStats } from "./postgres-group-commit.js";
import { createPostgresHousekeeping } from "./postgres-housekeeping.js";
import { createPostgresIntentReads } from "./postgres-intents.js";
import { createPostgresLatencyReads } from "./postgres-latency-reads.js";
import { createPostgresLifecycleReads, type Query } from "./postgres-lifecycle.js";
import { migratePostgres, pendingPostgresMigrations, postgresMigrationApplied } from "./postgres-migrate.js";
import { createPostgresOverviewReads } from "./postgres-overview-reads.js";
import {
  CLAIM_EFFECTS,
  claimDueJobsText,
  EXTEND_EFFECT_LEASE,
  FINISH_EFFECT,
  listEffectsStatement,
  listJobsStatement,
  STATS,
} from "./postgres-queries.js";
import {
  type EffectRow,
  type EventRow,
  effectFromRow,
  eventFromRow,
  fromTime,
  type JobRow,
  jobFromRow,
  toTime,
} from "./postgres-rows.js";
import { createPostgresRunReads } from "./postgres-run-reads.js";
import { createPostgresSettlements } from "./postgres-settlements.js";
import { createPostgresTx, type PostgresSchemaFeatures } from "./postgres-tx.js";

export interface PostgresStoreOptions {
  /** postgres://user@host:port/database */
  url: string;
  /** Schema holding Finality's tables (created if missing); default: the server's search_path. */
  schema?: string;
  /** Connections in this process's pool (10). */
  max?: number;
  idleTimeoutSeconds?: number;
  /** Bound on opening a connection and on waiting for a pooled one, each (5). */
  connectTimeoutSeconds?: number;
  /** statement_timeout in ms (15,000): a longer statement is cancelled and its caller gets a 503. */
  statementTimeoutMs?: number;
  /** lock_timeout in ms (5,000): a longer wait for a lock (held by a stalled peer) gives a 503. */
  lockTimeoutMs?: number;
  /**
   * idle_in_transaction_session_timeout in ms (10,000): the server ends a session whose
   * transaction sat idle this long (a frozen or cut-off replica) and so releases its locks.
   */
  idleInTransactionTimeoutMs?: number;
  /**
   * How long this process waits for the answer to one statement, in ms (statementTimeoutMs +
   * 5,000): the bound when the server or the network goes silent. Then store-unavailable (503).
   */
  queryTimeoutMs?: number;
  /** How long /readyz waits for its answer before it says not ready (800 ms). */
  readyTimeoutMs?: number;
  /** Apply pending migrations when the store opens (true). */
  migrate?: boolean;
  /** Runs of one transaction after a version conflict, serialization failure or deadlock (8). */
  maxAttempts?: number;
  /**
   * This machine's clock, which `clock` corrects to the database's (the system clock; a test
   * offsets it to play a replica whose clock is wrong).
   */
  localClock?: Clock;
  /** How often `clock` measures its offset to the database's clock again (30 s). */
  clockSyncIntervalMs?: number;
  /** Most concurrent transactions committed together (32); 1 turns group commit off. */
  groupCommitMaxBatch?: number;
  /** How long a group is collected before it starts, in ms (0: until the event loop is idle). */
  groupCommitMaxWaitMs?: number;
  /** Groups in flight at once, each on its own connection (`max` - 1, at least 1). */
  groupCommitConcurrency?: number;
  /**
   * How often a wait for settlements reads the newest one, behind LISTEN/NOTIFY (2000 ms): the
   * fallback while the LISTEN connection is down.
   */
  settlementPollMs?: number;
}

export interface PostgresStore extends Store {
  /** The database's clock (see postgres-clock.ts): the ledger's default clock on PostgreSQL. */
  readonly clock: DatabaseClock;
  /**
   * Resolves once the store is open, with the migration versions this instance applied (none when
   * another replica got there first); rejects with `store-unavailable` when the database is down.
   */
  opened(): Promise<number[]>;
  /** The pool's counters and gauges (waits, timeouts, connections), for /metrics. */
  poolStats(): PoolStats;
  /** What the group commit has done (postgres-group-commit.ts). */
  groupCommitStats(): GroupCommitStats;
}

/** A bound parameter: node-postgres sends each as text (JSON is cast with `::text::jsonb`). */
type Value = unknown;

/**
 * How long a grouped ingest waits for a row lock before it leaves its group (postgres-group-commit.ts):
 * longer than a healthy peer's group holds a row (a few ms), short beside the time its
 * batch-mates can be made to wait.
 */
const GROUP_LOCK_WAIT_MS = 20;

/**
 * The PostgreSQL store. Returns at once, like the SQLite one, so configuration code stays
 * synchronous; the pool connects and migrates on first use (`opened()` waits for that, and
 * `openPostgresStore` fails fast). A failed open is retried by the next call, so a database
 * that was down at start-up does not leave the process broken.
 */
/** The migration from which `finality_ingest` writes a row planned with a lease claimed. */
const CLAIMS_AT_ONCE_MIGRATION = 19;

export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  const sql: Sql = createClient({ ...options, databaseNow: () => earliestDatabaseNow(clock) });
  // Readiness has a connection of its own: a starved main pool must not make /readyz hang, and
  // the probe must not take a connection a request needs. Its statement cannot outlive the probe.
  // Under a second with the HTTP answer around it, which is what a load balancer's probe allows.
  const readyTimeoutMs = options.readyTimeoutMs ?? 800;
  const readiness: Sql = createClient({
    ...options,
    max: 1,
    connectTimeoutSeconds: readyTimeoutMs / 1000,
    statementTimeoutMs: readyTimeoutMs,
  });
  const maxAttempts = Math.max(1, options.maxAttempts ?? 8);
  let opening: Promise<number[]> | null = null;
  let closed = false;
  // What the schema can do, known once the store is open (read by each transaction it makes).
  const schema: PostgresSchemaFeatures = { claimsAtOnce: false };
  const clock = databaseClock(async () => {
    const [row] = await sql.unsafe<{ ms: number }>(
      "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms",
    );
    if (row === undefined) throw new FinalityError("internal", "clock_timestamp() returned no row");
    return row.ms;
  }, options.localClock ?? systemClock);

  function opened(): Promise<number[]> {
    if (closed) return Promise.reject(new FinalityError("shutting-down", "the store is closed"));
    if (opening === null) {
      opening = (options.migrate === false ? Promise.resolve([]) : migratePostgres(sql, options.schema))
        .then(async (applied) => {
          // Migrated here, the schema is this version's; left to someone else, it may be older, and
          // a row handed over must then be claimed by its own transaction the ordinary way.
          schema.claimsAtOnce =
            options.migrate !== false || (await postgresMigrationApplied(sql, CLAIMS_AT_ONCE_MIGRATION));
          // Before the first lease is written: from here on this replica counts the database's time.
          await clock.sync();
          clock.start(options.clockSyncIntervalMs ?? 30_000);
          return applied;
        })
        .catch((error: unknown) => {
          opening = null;
          throw toStoreError(error, "opening the PostgreSQL store");
        });
    }
    return opening;
  }

  /** Opens, runs `query`, maps driver errors, and retries transient failures a bounded number of times. */
  async function run<T>(what: string, query: () => Promise<T>): Promise<T> {
    await opened();
    for (let attempt = 1; ; attempt++) {
      try {
        return await query();
      } catch (error) {
        if (!isTransient(error) || attempt >= maxAttempts || closed) throw toStoreError(error, what);
        await pause(attempt);
      }
    }
  }

  const rows = <T>(text: string, values: readonly unknown[] = []) =>
    sql.unsafe(text, values as Value[], { prepare: true }) as unknown as Promise<T[] & { count: number }>;

  const read = <T>(what: string, text: string, values: readonly unknown[] = []) =>
    run(what, () => rows<T>(text, values));

  const transact = <T>(what: string, work: (q: Query) => Promise<T>): Promise<T> =>
    run(what, async () => {
      const result = await sql.begin("isolation level read committed", (tx) =>
        work((text, values = []) => tx.unsafe(text, values as Value[], { prepare: true }) as never),
      );
      return result as T;
    });

  /**
   * One caller's work in a transaction of its own, re-run after a lost race. Its COMMIT may go out
   * behind its last statement (TransactionSettings.worksLeft); a last statement that found more to
   * do (NOT_LAST) has it run again with the COMMIT waiting for every answer.
   */
  const alone = <T>(work: (tx: AdapterTx) => Promise<T>, lockWaitMs?: number): Promise<T> => {
    const lockTimeout = lockWaitMs === undefined ? {} : { lockTimeoutMs: lockWaitMs };
    const once = async (ahead: boolean) => {
      let worksLeft = 1;
      const finish = (ok: boolean) => {
        worksLeft = ok ? 0 : -1;
      };
      const settings = ahead ? { ...lockTimeout, together: true, worksLeft: () => worksLeft } : lockTimeout;
      const result = await sql.begin(
        "isolation level read committed",
        (tx) =>
          work(createPostgresTx(tx, schema)).then(
            (value) => {
              finish(true);
              return value;
            },
            (error: unknown) => {
              finish(false);
              throw error;
            },
          ),
        settings,
      );
      return result as T;
    };
    return run("transaction", () =>
      once(true).catch((error: unknown) => {
        if (sqlState(error) !== NOT_LAST) throw error;
        return once(false);
      }),
    );
  };
  const pool = options.max ?? 10;
  const committer = createPostgresGroupCommitter(
    sql,
    {
      maxBatch: Math.max(1, options.groupCommitMaxBatch ?? 32),
      maxWaitMs: Math.max(0, options.groupCommitMaxWaitMs ?? 0),
      // Groups only form when this many transactions are in flight already: below that, each
      // ingest runs at once on a connection of its own, as without group commit. One connection
      // of the pool is left for reads and the dispatcher.
      concurrency: Math.max(1, Math.min(pool, options.groupCommitConcurrency ?? pool - 1)),
      maxAttempts,
      lockWaitMs: GROUP_LOCK_WAIT_MS,
      lockTimeoutMs: options.lockTimeoutMs ?? POSTGRES_TIMEOUT_DEFAULTS.lockTimeoutMs,
    },
    { opened, alone, newTx: (tx) => createPostgresTx(tx, schema) },
  );

  const settlements = createPostgresSettlements(read, options);

  return {
    ...createPostgresRunReads(read),
    ...settlements.reads,
    ...createPostgresHousekeeping(read, transact),
    ...createPostgresLifecycleReads(read),
    ...createPostgresIntentReads(read),
    ...createPostgresOverviewReads(read),
    ...createPostgresLatencyReads(read),
    dialect: "postgres",
    clock,
    opened,

    transaction<T>(work: (tx: StoreTx) => Promise<T>, txOptions?: TransactionOptions): Promise<T> {
      return withAfterCommit((adapterWork) => committer.enqueue(adapterWork, txOptions?.lockOrder), work);
    },

    async hasDelivery(provider: string, deliveryId: string) {
      const text = "SELECT 1 FROM deliveries WHERE provider = $1 AND delivery_id = $2";
      return (await read("hasDelivery", text, [provider, deliveryId])).length > 0;
    },

    async getJob(key: JobKey) {
      // One json column, as the transaction's reads (the dispatcher reads a job per delivery).
      const text = `SELECT ${JOBS.postgres.selectArray} AS r FROM jobs WHERE provider = $1 AND id = $2`;
      const [row] = await read<{ r: readonly unknown[] }>("getJob", text, [key.provider, key.id]);
      return row ? JOBS.postgres.fromArray(row.r) : null;
    },

    async listJobs(query: JobQuery): Promise<Page<Job>> {
      const statement = listJobsStatement(query);
      const found = await read<JobRow>("listJobs", statement.text, statement.values);
      return keysetPage(found, statement.limit, jobFromRow, (row) => row.job_no);
    },

    async jobEvents(key: JobKey, options = {}): Promise<JobEvent[]> {
      const found = await read<EventRow>(
        "jobEvents",
        "SELECT * FROM events WHERE provider = $1 AND job_id = $2 AND event_no > $3 ORDER BY event_no LIMIT $4",
        [key.provider, key.id, options.after ?? 0, clampLimit(options.limit, 1000, 10_000)],
      );
      return found.map(eventFromRow);
    },

    async getEffect(id: string) {
      const [row] = await read<EffectRow>("getEffect", "SELECT * FROM outbox WHERE id = $1", [id]);
      return row ? effectFromRow(row) : null;
    },

    async listEffects(query: EffectQuery): Promise<Page<Effect>> {
      const statement = listEffectsStatement(query);
      const found = await read<EffectRow>("listEffects", statement.text, statement.values);
      return keysetPage(found, statement.limit, effectFromRow, (row) => row.effect_no);
    },

    claimEffects(now: number, limit: number, leaseMs: number) {
      return run("claimEffects", async () => {
        type Claimed = {
          r: readonly unknown[];
          effect_no: number;
          claim_branch: number;
          claim_due_ms: number;
        };
        const found = await rows<Claimed>(CLAIM_EFFECTS, [toTime(now), limit, toTime(now + leaseMs)]);
        // RETURNING has no order: hand them back in claim order (pending first, earliest due first).
        found.sort(
          (a, b) =>
            a.claim_branch - b.claim_branch || a.claim_due_ms - b.claim_due_ms || a.effect_no - b.effect_no,
        );
        return found.map((row) => EFFECTS.postgres.fromArray(row.r));
      });
    },

    finishEffect(outcome: EffectOutcome) {
      return run("finishEffect", async () => {
        const result = await rows(FINISH_EFFECT, [
          outcome.id,
          outcome.kind === "delivered" ? "delivered" : outcome.kind === "dead" ? "dead" : "pending",
          toTime(outcome.kind === "retry" ? outcome.nextAttemptAt : outcome.at),
          outcome.kind === "delivered" ? null : outcome.error,
          outcome.kind === "delivered" ? toTime(outcome.at) : null,
          toTime(outcome.claimedUntil),
        ]);
        return result.count === 1;
      });
    },

    extendEffectLease(id: string, claimedUntil: number, leaseUntil: number) {
      return run("extendEffectLease", async () => {
        const result = await rows(EXTEND_EFFECT_LEASE, [id, toTime(claimedUntil), toTime(leaseUntil)]);
        return result.count === 1;
      });
    },

    claimDueJobs(now: number, limit: number, leaseUntil: number, providers?: readonly string[]) {
      return run("claimDueJobs", async () => {
        const byProvider = providers !== undefined && providers.length > 0;
        const values: unknown[] = [toTime(now), limit, toTime(leaseUntil)];
        if (byProvider) values.push([...providers]);
        const found = await rows<JobRow & { claim_due_at: Date }>(claimDueJobsText(byProvider), values);
        found.sort((a, b) => fromTime(a.claim_due_at) - fromTime(b.claim_due_at) || a.job_no - b.job_no);
        return found.map(jobFromRow);
      });
    },

    poolStats: () => {
      // A grouped caller's lock wait ends in the group commit, not in a lock_timeout of the pool's.
      const pool = sql.stats();
      return { ...pool, lockTimeouts: pool.lockTimeouts + committer.stats().lockTimeouts };
    },
    groupCommitStats: () => committer.stats(),

    /**
     * Within `readyTimeoutMs`: false when callers have waited that long for a pooled connection
     * (the pool is starved: this replica would hang a request) or the database does not answer
     * on the readiness connection, or migrations are pending.
     */
    async ready() {
      if (closed) return false;
      if (sql.starvedMs() >= readyTimeoutMs) return false;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), readyTimeoutMs);
      });
      const probe = (async () => {
        await Promise.race([opened(), deadline]);
        return (await pendingPostgresMigrations(readiness)) === 0;
      })().catch(() => false);
      try {
        return await Promise.race([probe, deadline]);
      } finally {
        clearTimeout(timer);
      }
    },

    stats(now: number): Promise<StoreStats> {
      return run("stats", async () => {
        type StatsRow = {
          jobs_by_state: Record<string, number>;
          effects_by_status: Record<string, number>;
          stuck_jobs: number;
          conflict_jobs: number;
          oldest_open_submitted_at: Date | null;
          due_jobs: number;
        };
        const [row] = await rows<StatsRow>(STATS, [toTime(now)]);
        if (!row) throw new FinalityError("internal", "stats returned no row");
        return {
          jobsByState: row.jobs_by_state,
          openJobs: (row.jobs_by_state.pending ?? 0) + (row.jobs_by_state.running ?? 0),
          stuckJobs: row.stuck_jobs,
          conflictJobs: row.conflict_jobs,
          effectsByStatus: row.effects_by_status,
          oldestOpenSubmittedAt: fromTime(row.oldest_open_submitted_at),
          dueJobs: row.due_jobs,
        };
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      clock.stop();
      await settlements.close();
      // Callers already queued are answered (committed or refused) before the pool closes.
      await committer.drain();
      // Lets queries already sent finish (bounded), then closes every pooled connection.
      await Promise.all([sql.end({ timeout: 5 }), readiness.end({ timeout: 1 })]);
    },
  };
}

/** Creates the store and waits until it is open: fails fast when the database is unreachable. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const store = createPostgresStore(options);
  try {
    await store.opened();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

/** Jittered backoff before re-running a transaction that lost a race: 1–2, 2–4, ... ms, capped at 50. */
function pause(attempt: number): Promise<void> {
  const base = Math.min(50, 2 ** (attempt - 1));
  return new Promise((resolve) => setTimeout(resolve, base + Math.random() * base));
}
