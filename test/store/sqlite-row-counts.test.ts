import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeEffect, makeJob } from "../helpers/records.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { insertEffects, insertJobs } from "./contract/harness.js";

let dir: TempDir | null = null;
afterEach(() => {
  dir?.cleanup();
  dir = null;
});

describe("SQLite row counts (migration 0005)", () => {
  it("are filled from the rows already stored when a file from before them is upgraded", async () => {
    dir = tempDir();
    const path = dir.file("ledger.db");
    const store = createSqliteStore({ path });
    await insertJobs(store, [
      ...Array.from({ length: 3 }, (_, i) => makeJob({ id: `p-${i}` })),
      ...Array.from({ length: 2 }, (_, i) => makeJob({ id: `s-${i}`, state: "succeeded" })),
    ]);
    await insertEffects(store, [makeEffect({ jobId: "s-0" }), makeEffect({ jobId: "s-1" })]);
    await store.close();

    // Put the file back as it was before migration 0005: no table, no triggers, not applied.
    const db = new Database(path);
    for (const { name } of db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_counted_%'")
      .all() as { name: string }[])
      db.exec(`DROP TRIGGER ${name}`);
    db.exec("DROP TABLE row_counts; DELETE FROM schema_migrations WHERE version = 5");
    db.exec(
      "INSERT INTO jobs (provider, id, state, version, submitted_at, updated_at, registered) VALUES ('generic', 'r-0', 'running', 1, 0, 0, 1)",
    );
    db.close();

    const upgraded = createSqliteStore({ path });
    try {
      const stats = await upgraded.stats(0);
      expect(stats.jobsByState).toEqual({ pending: 3, running: 1, succeeded: 2 });
      expect(stats.effectsByStatus).toEqual({ pending: 2 });
    } finally {
      await upgraded.close();
    }
  });
});
