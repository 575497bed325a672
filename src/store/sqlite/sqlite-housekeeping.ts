import type { HousekeepingStats, HousekeepingStore, PruneTarget } from "../housekeeping-store.js";
import type { SqliteDb } from "./sqlite-driver.js";
import { writeTombstones } from "./sqlite-lifecycle.js";

type Enqueue = <T>(work: () => Promise<T>) => Promise<T>;

/** How one target is pruned: its batch's select, the deletes of those keys, its oldest row. */
interface Prunable {
  select: string;
  delete: (keys: string) => string[];
  oldest: string;
  /** How many leading columns of `select` are the key (default: all of them). */
  keyColumns?: number;
  /** Runs in the batch's transaction before its deletes, with the selected rows. */
  beforeDelete?: (db: SqliteDb, rows: readonly unknown[][], maxParameters: number) => void;
}

/**
 * A table pruned by its own time column alone, its rows named by `key` (one column, or several
 * that the deletes match as a tuple).
 */
function olderThan(table: string, key: string, at: string): Prunable {
  const keyed = key.includes(",") ? `(${key})` : key;
  return {
    select: `SELECT ${key} FROM ${table} WHERE ${at} < ? ORDER BY ${at} LIMIT ?`,
    delete: (keys) => [`DELETE FROM ${table} WHERE ${keyed} IN (${keys})`],
    oldest: `SELECT min(${at}) AS at FROM ${table}`,
  };
}

/**
 * Each target as (rows older than ? , oldest first, at most ?). Deletes go by primary key through
 * the time indexes of migration 0004, so a batch touches only what it deletes.
 */
const PRUNABLE: Record<PruneTarget, Prunable> = {
  deliveries: olderThan("deliveries", "provider, delivery_id", "received_at"),
  events: olderThan("events", "event_no", "at"),
  settledJobs: {
    // The key first; the rest is what the tombstone keeps.
    select: `SELECT job_no, provider, id, state, settled_at FROM jobs j INDEXED BY jobs_settled_by_source
      WHERE settled_at IS NOT NULL AND settled_at < ?
        AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.provider = j.provider AND o.job_id = j.id AND o.status <> 'delivered')
      ORDER BY settled_at LIMIT ?`,
    delete: (keys) => [`DELETE FROM jobs WHERE job_no IN (${keys})`],
    oldest: "SELECT min(settled_at) AS at FROM jobs WHERE settled_at IS NOT NULL",
    keyColumns: 1,
    // A deleted job leaves its tombstone, so that a late webhook cannot bring it back.
    beforeDelete: writeTombstones,
  },
  deliveredEffects: {
    select:
      "SELECT effect_no FROM outbox WHERE status = 'delivered' AND delivered_at < ? ORDER BY delivered_at LIMIT ?",
    delete: (keys) => [`DELETE FROM outbox WHERE effect_no IN (${keys})`],
    oldest: "SELECT min(delivered_at) AS at FROM outbox WHERE status = 'delivered'",
  },
  settledRuns: {
    select: "SELECT id FROM runs WHERE settled_at IS NOT NULL AND settled_at < ? ORDER BY settled_at LIMIT ?",
    // Attempts reference their run: they go first.
    delete: (keys) => [
      `DELETE FROM run_events WHERE run_id IN (${keys})`,
      `DELETE FROM attempts WHERE run_id IN (${keys})`,
      `DELETE FROM runs WHERE id IN (${keys})`,
    ],
    oldest: "SELECT min(settled_at) AS at FROM runs WHERE settled_at IS NOT NULL",
  },
  tombstones: olderThan("tombstones", "provider, id", "settled_at"),
  parked: olderThan("parked", "parked_no", "parked_at"),
  settlements: olderThan("settlements", "settlement_no", "settled_at"),
};

/** How much room the database takes, and how freed pages go back: the file's pages by default. */
export interface SqliteSpace {
  sizeBytes(): number;
  freeBytes(): number;
  /** Gives back up to `maxPages` free pages; returns how many. Runs inside a write transaction. */
  reclaim(maxPages: number): number;
}

function pragmaSpace(writer: SqliteDb, reader: SqliteDb): SqliteSpace {
  const count = (db: SqliteDb, pragma: string) => db.pragma(pragma, { simple: true }) as number;
  return {
    sizeBytes: () => count(reader, "page_size") * count(reader, "page_count"),
    freeBytes: () => count(reader, "page_size") * count(reader, "freelist_count"),
    reclaim(maxPages) {
      // Only files created with auto_vacuum = INCREMENTAL can give pages back; on others the
      // freed pages still go to the freelist and are reused by the next writes.
      const before = count(writer, "freelist_count");
      writer.pragma(`incremental_vacuum(${Math.max(0, Math.trunc(maxPages))})`);
      return before - count(writer, "freelist_count");
    },
  };
}

/** `enqueue` runs work inside the store's write transactions, so pruning interleaves with ingest. */
export function createSqliteHousekeeping(
  writer: SqliteDb,
  reader: SqliteDb,
  enqueue: Enqueue,
  space: SqliteSpace = pragmaSpace(writer, reader),
  /** Most `?` one statement may bind (SQLite's default allows 32766; a Durable Object, 100). */
  maxParameters = 32_766,
): HousekeepingStore {
  return {
    prune(target, before, limit) {
      const spec = PRUNABLE[target];
      return enqueue(async () => {
        const selected = writer.prepare(spec.select).raw().all(before, limit) as unknown[][];
        if (selected.length === 0) return 0;
        spec.beforeDelete?.(writer, selected, maxParameters);
        const rows = spec.keyColumns ? selected.map((row) => row.slice(0, spec.keyColumns)) : selected;
        const perStatement = Math.max(1, Math.floor(maxParameters / (rows[0]?.length ?? 1)));
        for (let start = 0; start < rows.length; start += perStatement) {
          const chunk = rows.slice(start, start + perStatement);
          const keys = chunk
            .map((row) => (row.length === 1 ? "?" : `(${row.map(() => "?").join(", ")})`))
            .join(", ");
          const params = chunk.flat();
          for (const statement of spec.delete(keys)) writer.prepare(statement).run(...params);
        }
        return rows.length;
      });
    },

    async countPrunable(target, before) {
      const sql = `SELECT count(*) FROM (${PRUNABLE[target].select.replace(/ ORDER BY .* LIMIT \?$/s, "")})`;
      return reader.prepare(sql).pluck().get(before) as number;
    },

    async housekeepingStats(): Promise<HousekeepingStats> {
      const oldest = Object.fromEntries(
        Object.entries(PRUNABLE).map(([target, spec]) => [
          target,
          reader.prepare(spec.oldest).pluck().get() ?? null,
        ]),
      ) as HousekeepingStats["oldest"];
      return { sizeBytes: space.sizeBytes(), freeBytes: space.freeBytes(), oldest };
    },

    reclaim(maxPages = 2000) {
      return enqueue(async () => space.reclaim(maxPages));
    },
  };
}
