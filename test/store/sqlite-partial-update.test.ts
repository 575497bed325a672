import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createFinality } from "../../src/engine/create-finality.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { JOBS } from "../../src/store/tables.js";
import { makeJob } from "../helpers/records.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";

// A job's UPDATE names only the columns that moved: SQLite rewrites every index over a SET
// column, and runs every `UPDATE OF` trigger on one, whether or not its value changed. Seen from
// outside through a trigger per column, which fires exactly when its column is in the SET list.

let dir: TempDir | null = null;
afterEach(() => {
  dir?.cleanup();
  dir = null;
});

/** A ledger file with a trigger per job column that records the column each time it is SET. */
async function watched() {
  dir = tempDir();
  const path = dir.file("ledger.db");
  // Created and migrated by the store first.
  await createSqliteStore({ path }).close();
  const db = new Database(path);
  db.exec("CREATE TABLE set_columns (n INTEGER PRIMARY KEY, col TEXT NOT NULL)");
  for (const column of JOBS.sqlite.columns)
    db.exec(
      `CREATE TRIGGER watch_${column} AFTER UPDATE OF ${column} ON jobs BEGIN INSERT INTO set_columns (col) VALUES ('${column}'); END`,
    );
  return {
    path,
    /** The columns SET since the last call. */
    taken(): string[] {
      const cols = (db.prepare("SELECT col FROM set_columns ORDER BY n").all() as { col: string }[]).map(
        (r) => r.col,
      );
      db.exec("DELETE FROM set_columns");
      return cols.sort();
    },
    close: () => db.close(),
  };
}

describe("SQLite: a job's UPDATE writes only the columns that moved", () => {
  it("a running webhook's forward move leaves the state, the JSON columns and their indexes alone; the settling one writes what settles", async () => {
    const file = await watched();
    const finality = createFinality({ store: { sqlite: file.path }, clock: { now: () => 1_000_000 } });
    try {
      await finality.ingest({
        provider: "generic",
        id: "j1",
        source: "webhook",
        state: "running",
        seq: 1,
        deliveryId: "d1",
      });
      file.taken();
      await finality.ingest({
        provider: "generic",
        id: "j1",
        source: "webhook",
        state: "running",
        seq: 2,
        deliveryId: "d2",
      });
      expect(file.taken()).toEqual(["max_seq", "version"]);
      await finality.ingest({
        provider: "generic",
        id: "j1",
        source: "webhook",
        state: "succeeded",
        seq: 3,
        deliveryId: "d3",
        result: { url: "https://example.com/out.json" },
      });
      expect(file.taken()).toEqual([
        "max_seq",
        "next_check_at",
        "result",
        "settled_at",
        "settled_by",
        "state",
        "version",
      ]);
      const job = await finality.getJob({ provider: "generic", id: "j1" });
      expect(job).toMatchObject({
        state: "succeeded",
        version: 3,
        maxSeq: 3,
        settledAt: 1_000_000,
        settledBy: "webhook",
        nextCheckAt: null,
        result: { url: "https://example.com/out.json" },
      });
    } finally {
      await finality.close();
      file.close();
    }
  });

  it("writes every column when no previous job is given, and keeps the version check either way", async () => {
    const file = await watched();
    const store = createSqliteStore({ path: file.path });
    try {
      const before = makeJob({ id: "j2", state: "running", metadata: { a: 1 } });
      await store.transaction(async (tx) => tx.insertJob(before));
      const after = { ...before, version: 2, maxSeq: 5 };
      expect(await store.transaction((tx) => tx.updateJob(after, 1))).toBe(true);
      expect(file.taken()).toHaveLength(JOBS.sqlite.assignmentsPositional.split(", ").length);
      const next = { ...after, version: 3, metadata: { a: 2 } };
      // A stale expected version writes nothing, partial or not.
      expect(await store.transaction((tx) => tx.updateJob(next, 1, after))).toBe(false);
      expect(await store.transaction((tx) => tx.updateJob(next, 2, after))).toBe(true);
      expect(file.taken()).toEqual(["metadata", "version"]);
      expect(await store.getJob(next)).toEqual(next);
    } finally {
      await store.close();
      file.close();
    }
  });
});
