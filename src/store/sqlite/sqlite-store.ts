import Database from "better-sqlite3";
import { FinalityError } from "../../core/errors.js";
import type { Store } from "../store.js";
import { createGroupCommitter } from "./group-commit.js";
import { migrateSqlite, pendingSqliteMigrations } from "./sqlite-migrate.js";
import { createSqliteStoreFrom } from "./sqlite-store-core.js";
import { createSqliteTx, prepareWriteStatements } from "./sqlite-tx.js";

export interface SqliteStoreOptions {
  /** File path, or ":memory:". */
  path: string;
  /**
   * FULL (default): a commit, and so every 2xx, survives a power loss; concurrent callers share
   * its fsync (group commit). NORMAL survives a crash of the process only: in WAL mode the last
   * commits may roll back when the machine stops.
   */
  synchronous?: "NORMAL" | "FULL";
  /**
   * SQLite's page cache, per connection, in MiB (`DEFAULT_SQLITE_CACHE_MIB`); the store opens two
   * (the writer and the reader). Pages it does not hold are read again from the operating system's
   * file cache.
   */
  cacheMiB?: number;
  busyTimeoutMs?: number;
  /** Most transactions committed together in one group. */
  maxBatch?: number;
  /**
   * How often a wait for settlements looks for commits of other processes on the file (1000 ms);
   * this process's own commits wake it at once.
   */
  settlementPollMs?: number;
}

/**
 * 4 MiB a connection, not better-sqlite3's 16: under a webhook load the writer's cache filled to
 * 15–30 MiB more of peak memory. It bought nothing measurable without effects, and ~6% of the CPU
 * per webhook with one effect per three (bench/README.md, "Memory: SQLite's page cache"): memory
 * first by default, `cacheMiB: 16` for the CPU. SQLite's own default is 2 MiB.
 */
export const DEFAULT_SQLITE_CACHE_MIB = 4;

export function createSqliteStore(options: SqliteStoreOptions): Store {
  const { cacheMiB } = options;
  if (cacheMiB !== undefined && !(Number.isFinite(cacheMiB) && cacheMiB > 0))
    throw new FinalityError("invalid-config", `cacheMiB must be a positive number of MiB, not ${cacheMiB}`, {
      details: { field: "cacheMiB" },
    });
  const writer = open(options.path, options);
  migrateSqlite(writer);
  // Reads use their own connection: in WAL mode they see only committed data and never wait
  // for a writer, and they cannot observe a group that is still being written.
  const reader = options.path === ":memory:" ? writer : open(options.path, options);
  const tx = createSqliteTx(writer, prepareWriteStatements(writer));
  const committer = createGroupCommitter(writer, tx, options.maxBatch ?? 512);
  return createSqliteStoreFrom({
    writer,
    reader,
    transaction: (work) => committer.enqueue(work),
    pendingMigrations: () => pendingSqliteMigrations(reader),
    ...(options.settlementPollMs === undefined ? {} : { settlementPollMs: options.settlementPollMs }),
    async close() {
      await committer.drain();
      if (reader !== writer) reader.close();
      writer.close();
    },
  });
}

function open(path: string, options: SqliteStoreOptions): Database.Database {
  const db = new Database(path);
  // Takes effect on a new file only (before its first table): freed pages can then be handed
  // back to the file system by `reclaim`. On an older file it changes nothing.
  db.pragma("auto_vacuum = INCREMENTAL");
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${options.synchronous ?? "FULL"}`);
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  db.pragma("foreign_keys = ON");
  // Negative: a size in KiB, whatever the page size.
  db.pragma(`cache_size = ${-Math.round((options.cacheMiB ?? DEFAULT_SQLITE_CACHE_MIB) * 1024)}`);
  return db;
}
