import { afterEach, describe, expect, it } from "vitest";
import { FinalityError, isFinalityError } from "../../src/core/errors.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store, StoreTx } from "../../src/store/store.js";
import { makeJob } from "../helpers/records.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";

// When SQLite itself rolls the whole write transaction back (an I/O error, a full disk), a group
// of callers must still each be answered once, and the connection must go on working. A work
// that issues ROLLBACK stands in for SQLite doing it.

let dir: TempDir | null = null;
let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  dir?.cleanup();
  dir = null;
});

function open(): Store {
  dir = tempDir();
  store = createSqliteStore({ path: dir.file("ledger.db") });
  return store;
}

const insert = (id: string) => async (tx: StoreTx) => tx.insertJob(makeJob({ id }));
const outcomes = (results: PromiseSettledResult<unknown>[]) =>
  results.map((r) =>
    r.status === "fulfilled" ? "ok" : isFinalityError(r.reason) ? r.reason.code : String(r.reason),
  );

describe("group commit when the transaction is gone", () => {
  it("answers the failing work, commits the rest of its group, and carries on", async () => {
    const s = open();
    const results = await Promise.allSettled([
      s.transaction(insert("a")),
      s.transaction(async (tx) => {
        await tx.execute("ROLLBACK");
        throw new Error("the disk is full");
      }),
      s.transaction(insert("c")),
    ]);
    expect(outcomes(results)).toEqual(["ok", "Error: the disk is full", "ok"]);
    expect((await s.getJob({ provider: "generic", id: "a" }))?.id).toBe("a");
    expect((await s.getJob({ provider: "generic", id: "c" }))?.id).toBe("c");
    expect(await s.transaction(insert("after"))).toBe(true);
  });

  it("rejects every caller not yet answered, once, when it is lost on the one-savepoint-per-work path", async () => {
    const s = open();
    let calls = 0;
    const results = await Promise.allSettled([
      s.transaction(insert("a")),
      s.transaction(async (tx) => {
        calls++;
        // First run: a version conflict sends the group down the savepoint path; there the
        // transaction disappears under the work.
        if (calls === 1) throw new FinalityError("version-conflict", "raced");
        await tx.execute("ROLLBACK");
        throw new Error("I/O error");
      }),
      s.transaction(insert("c")),
    ]);
    expect(outcomes(results)).toEqual(["store-unavailable", "store-unavailable", "store-unavailable"]);
    // Nothing of the lost transaction stays, and the next one commits.
    expect(await s.getJob({ provider: "generic", id: "a" })).toBeNull();
    expect(await s.transaction(insert("a"))).toBe(true);
  });
});
