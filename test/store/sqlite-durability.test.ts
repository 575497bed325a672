import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";

let dir: TempDir | null = null;
afterEach(() => {
  dir?.cleanup();
  dir = null;
});

async function synchronousOf(options: { synchronous?: "NORMAL" | "FULL" }): Promise<unknown> {
  dir ??= tempDir();
  const store = createSqliteStore({
    path: dir.file(`ledger-${options.synchronous ?? "default"}.db`),
    ...options,
  });
  try {
    const rows = await store.transaction((tx) => tx.execute("PRAGMA synchronous"));
    return rows[0]?.synchronous;
  } finally {
    await store.close();
  }
}

describe("SQLite durability setting", () => {
  it("is FULL unless asked otherwise: a 2xx survives a power loss, not only a crash", async () => {
    expect(parseConfig({}, {}).store).toEqual({ sqlite: "./finality.db", synchronous: "FULL" });
    expect(parseConfig({ store: { sqlite: "./x.db" } }, {}).store).toEqual({
      sqlite: "./x.db",
      synchronous: "FULL",
    });
    // PRAGMA synchronous: 1 is NORMAL, 2 is FULL.
    expect(await synchronousOf({})).toBe(2);
    expect(await synchronousOf({ synchronous: "NORMAL" })).toBe(1);
    expect(parseConfig({}, { FINALITY_SQLITE_SYNCHRONOUS: "normal" }).store).toMatchObject({
      synchronous: "NORMAL",
    });
  });
});
