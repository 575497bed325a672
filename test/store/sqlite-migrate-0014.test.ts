import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/store/migrations.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeEffect, T0 } from "../helpers/records.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { insertEffects } from "./contract/harness.js";

let dir: TempDir | null = null;
afterEach(() => {
  dir?.cleanup();
  dir = null;
});

/** A ledger file as a release before migration 0014 left it: migrations 1–13 applied. */
function ledgerAtVersion13(path: string): Database.Database {
  const db = new Database(path);
  db.exec(
    "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
  );
  for (const migration of loadMigrations("sqlite").filter((m) => m.version <= 13)) {
    db.exec(migration.sql);
    db.prepare("INSERT INTO schema_migrations VALUES (?, ?, 0)").run(migration.version, migration.name);
  }
  return db;
}

describe("SQLite migration 0014 (the outbox rebuilt without its idempotency-key index)", () => {
  it("keeps every outbox row, its row counts and its triggers, and drops only the two indexes", async () => {
    dir = tempDir();
    const path = dir.file("ledger.db");
    const old = ledgerAtVersion13(path);
    const insert = old.prepare(
      `INSERT INTO outbox (effect_no, id, provider, job_id, name, idempotency_key, trigger, status, attempts,
         next_attempt_at, lease_until, last_error, created_at, delivered_at, trace_parent)
       VALUES (?, ?, 'generic', ?, 'notify', ?, 'succeeded', ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    insert.run(3, "e-pending", "j-1", "fin_a", "pending", 0, T0, null, null, T0, null, null);
    insert.run(
      7,
      "e-leased",
      "j-2",
      "fin_b",
      "delivering",
      1,
      T0,
      T0 + 30_000,
      null,
      T0,
      null,
      "00-ab-cd-01",
    );
    insert.run(9, "e-done", "j-3", "fin_c", "delivered", 2, T0, null, "HTTP 500", T0, T0 + 5, null);
    const before = old.prepare("SELECT * FROM outbox ORDER BY effect_no").all();
    old.close();

    await createSqliteStore({ path }).close();
    const migrated = new Database(path, { readonly: true });
    expect(migrated.prepare("SELECT * FROM outbox ORDER BY effect_no").all()).toEqual(before);
    migrated.close();

    const store = createSqliteStore({ path });
    try {
      expect((await store.stats(0)).effectsByStatus).toEqual({ pending: 1, delivering: 1, delivered: 1 });
      // The row counts' triggers were rebuilt with the table: a new row and a claim move them.
      await insertEffects(store, [makeEffect({ jobId: "j-4", id: "e-new", nextAttemptAt: T0 })]);
      const claimed = await store.claimEffects(T0 + 1, 10, 60_000);
      expect(claimed.map((e) => e.id).sort()).toEqual(["e-new", "e-pending"]);
      expect((await store.stats(0)).effectsByStatus).toEqual({ delivering: 3, delivered: 1 });
      // One row per (provider, job, name, trigger) still: the key that makes the digest unique.
      const again = await store.transaction((tx) =>
        tx.enqueueEffect(makeEffect({ jobId: "j-4", id: "e-again", nextAttemptAt: T0 })),
      );
      expect(again).toBe(false);
    } finally {
      await store.close();
    }

    const db = new Database(path, { readonly: true });
    try {
      // The new row took the next number after the copied ones.
      expect(db.prepare("SELECT effect_no FROM outbox WHERE id = 'e-new'").pluck().get()).toBe(10);
      const indexed = (
        db.prepare("SELECT name FROM pragma_index_list('outbox')").pluck().all() as string[]
      ).flatMap(
        (index) => db.prepare("SELECT name FROM pragma_index_info(?)").pluck().all(index) as string[],
      );
      expect(indexed).not.toContain("idempotency_key");
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'jobs_settled'").get()).toBeUndefined();
      expect(
        db
          .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'outbox' ORDER BY name",
          )
          .pluck()
          .all(),
      ).toEqual(["outbox_counted_delete", "outbox_counted_insert", "outbox_counted_update"]);
      expect(db.prepare("SELECT max(version) FROM schema_migrations").pluck().get()).toBe(14);
    } finally {
      db.close();
    }
  });
});
