import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { isFinalityError } from "../../src/core/errors.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { openStore } from "../../src/host/node/finality-from-config.js";
import { createSqliteStore, DEFAULT_SQLITE_CACHE_MIB } from "../../src/store/sqlite/sqlite-store.js";
import { tempDir } from "../helpers/temp-dir.js";

// SQLite's page cache per connection (`store.cacheMiB`): every connection the store opens, the
// writer and the reader, is asked afterwards what cache it has.
const dir = tempDir();
afterAll(() => dir.cleanup());
afterEach(() => vi.restoreAllMocks());

/** Runs `open`, and answers `PRAGMA cache_size` (negative: KiB) of each connection it opened. */
async function cacheSizesOpenedBy(open: () => Promise<{ close(): Promise<void> }>): Promise<number[]> {
  const opened = new Set<Database.Database>();
  const pragma = Database.prototype.pragma;
  vi.spyOn(Database.prototype, "pragma").mockImplementation(function (this: Database.Database, ...args) {
    opened.add(this);
    return pragma.apply(this, args);
  });
  const handle = await open();
  vi.restoreAllMocks();
  const sizes = [...opened].map((db) => db.pragma("cache_size", { simple: true }) as number);
  await handle.close();
  return sizes;
}

describe("SQLite's page cache", () => {
  it(`is ${DEFAULT_SQLITE_CACHE_MIB} MiB a connection by default, on the writer and the reader`, async () => {
    const sizes = await cacheSizesOpenedBy(async () => createSqliteStore({ path: dir.file("default.db") }));
    expect(sizes).toEqual([-DEFAULT_SQLITE_CACHE_MIB * 1024, -DEFAULT_SQLITE_CACHE_MIB * 1024]);
  });

  it("store.cacheMiB in the configuration reaches both connections", async () => {
    const config = parseConfig({ store: { sqlite: dir.file("config.db"), cacheMiB: 24 } }, {});
    const sizes = await cacheSizesOpenedBy(() => openStore(config.store));
    expect(sizes).toEqual([-24 * 1024, -24 * 1024]);
  });

  it("the library's createFinality passes store.cacheMiB on", async () => {
    const sizes = await cacheSizesOpenedBy(async () =>
      createFinality({ store: { sqlite: dir.file("library.db"), cacheMiB: 3 } }),
    );
    expect(sizes).toEqual([-3 * 1024, -3 * 1024]);
  });

  it("a library caller's cacheMiB that is not a positive number is refused before the file is opened", () => {
    for (const cacheMiB of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      let error: unknown;
      try {
        createSqliteStore({ path: dir.file("bad.db"), cacheMiB });
      } catch (caught) {
        error = caught;
      }
      expect(isFinalityError(error, "invalid-config")).toBe(true);
      expect((error as Error).message).toContain("cacheMiB");
    }
    expect(existsSync(dir.file("bad.db"))).toBe(false);
  });
});
