import { isFinalityError } from "../core/errors.js";
import { createSqliteStoreFrom } from "../store/sqlite/sqlite-store-core.js";
import { createSqliteTx, prepareWriteStatements } from "../store/sqlite/sqlite-tx.js";
import type { AdapterTx, Store } from "../store/store.js";
import type { DurableObjectStorage } from "./cloudflare-types.js";
import { durableObjectSqlite } from "./durable-object-sql.js";
import { withSettlementCursorBound } from "./settlement-cursor-bound.js";
import { SQLITE_MIGRATIONS } from "./sqlite-migrations.js";

const MAX_CONFLICT_RETRIES = 8;

/** One queue per object's storage, however many stores are opened on it. */
const queues = new WeakMap<DurableObjectStorage, { tail: Promise<unknown> }>();

/**
 * The Store on a Durable Object's SQLite database: the same SQL as the SQLite store on Node.
 *
 * Each transaction runs in `storage.transaction()`, which rolls back every write of a work that
 * throws, one after the other (a queue), so that two works never interleave between their awaits.
 * Durability: a Durable Object holds back every response ("output gate") until the writes made
 * before it are durable, so the 2xx still leaves only after the commit.
 */
export function createDurableObjectStore(storage: DurableObjectStorage): Store {
  migrateDurableObject(storage);
  const db = durableObjectSqlite(storage.sql);
  const tx = createSqliteTx(db, prepareWriteStatements(db));
  let queue = queues.get(storage);
  if (queue === undefined) {
    queue = { tail: Promise.resolve() };
    queues.set(storage, queue);
  }
  const serial = queue;
  let inFlight = 0;
  let idle: (() => void) | null = null;

  async function runWithRetries<T>(work: (tx: AdapterTx) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await storage.transaction(() => work(tx));
      } catch (error) {
        if (!isFinalityError(error, "version-conflict") || attempt >= MAX_CONFLICT_RETRIES) throw error;
      }
    }
  }

  const store = createSqliteStoreFrom({
    writer: db,
    // One connection: reads run between transactions, never inside one (the queue sees to it
    // for writes; a read between two awaits of a work sees that work's writes, as on Node's writer).
    reader: db,
    transaction<T>(work: (tx: AdapterTx) => Promise<T>): Promise<T> {
      inFlight++;
      const run = serial.tail.then(() => runWithRetries(work));
      serial.tail = run.catch(() => {});
      return run.finally(() => {
        inFlight--;
        if (inFlight === 0) idle?.();
      });
    },
    pendingMigrations: () => pendingMigrations(storage),
    // A Durable Object's SQLite binds at most 100 parameters per statement.
    maxParameters: 100,
    space: {
      sizeBytes: () => storage.sql.databaseSize,
      // Cloudflare manages the file: free pages are neither visible nor ours to give back.
      freeBytes: () => 0,
      reclaim: () => 0,
    },
    close() {
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        idle = resolve;
      });
    },
  });
  return withSettlementCursorBound(store, storage.sql);
}

/** Applies the embedded SQLite migrations not yet applied, each in its own transaction. */
export function migrateDurableObject(storage: DurableObjectStorage): number[] {
  const { sql } = storage;
  sql.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
  );
  const applied: number[] = [];
  for (const migration of SQLITE_MIGRATIONS) {
    const done = storage.transactionSync(() => {
      if (
        sql.exec("SELECT 1 FROM schema_migrations WHERE version = ?", migration.version).toArray().length > 0
      )
        return false;
      sql.exec(migration.sql);
      sql.exec(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
        migration.version,
        migration.name,
        Date.now(),
      );
      return true;
    });
    if (done) applied.push(migration.version);
  }
  return applied;
}

function pendingMigrations(storage: DurableObjectStorage): number {
  const done = new Set(
    storage.sql
      .exec("SELECT version FROM schema_migrations")
      .toArray()
      .map((row) => row.version as number),
  );
  return SQLITE_MIGRATIONS.filter((m) => !done.has(m.version)).length;
}

/**
 * When the object's alarm is next needed: an effect falls due (a pending retry, or a claim whose
 * lease runs out), or a run's attempt lease runs out (the sweep then ends or requeues it); null if none.
 */
export function nextAlarmDueAt(storage: DurableObjectStorage): number | null {
  const row = storage.sql
    .exec(
      `SELECT min(at) AS at FROM (
         SELECT min(next_attempt_at) AS at FROM outbox WHERE status = 'pending'
         UNION ALL
         SELECT min(lease_until) AS at FROM outbox WHERE status = 'delivering'
         UNION ALL
         SELECT min(lease_expires_at) AS at FROM attempts WHERE lease_expires_at IS NOT NULL)`,
    )
    .toArray()[0];
  return typeof row?.at === "number" ? row.at : null;
}

/**
 * Ends, as of `now`, the leases of the deliveries a dead run of this object left claimed, and
 * answers how many. Only the object itself delivers its effects, and only one instance of it runs
 * at a time: a row still `delivering` when it starts was claimed by an instance that is gone (the
 * runtime killed mid-delivery, an eviction, a deploy, a reshard's), whose answer will never be
 * recorded. Waiting out its lease (`effectDelivery.leaseSeconds`) would only hold the effect back;
 * the next claim sends it again under the same idempotency key.
 */
export function releaseOrphanedClaims(storage: DurableObjectStorage, now: number): number {
  const released = storage.sql
    .exec(
      "UPDATE outbox SET lease_until = ? WHERE status = 'delivering' AND lease_until > ? RETURNING id",
      now,
      now,
    )
    .toArray();
  return released.length;
}
