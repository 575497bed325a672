import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";

const PG = "postgres://postgres@127.0.0.1:5432/test";

describe("store settings from the environment", () => {
  it("DATABASE_URL replaces the file's URL and keeps the schema it names", () => {
    const file = { store: { postgres: "postgres://elsewhere/db", schema: "finality" } };
    expect(parseConfig(file, { DATABASE_URL: PG }).store).toEqual({ postgres: PG, schema: "finality" });
  });

  it("DATABASE_URL turns a SQLite file configuration into PostgreSQL, without SQLite's settings", () => {
    const file = { store: { sqlite: "./x.db", synchronous: "NORMAL" } };
    expect(parseConfig(file, { DATABASE_URL: PG }).store).toEqual({ postgres: PG });
  });

  it("FINALITY_DB wins over DATABASE_URL and keeps the file's synchronous", () => {
    const file = { store: { sqlite: "./x.db", synchronous: "NORMAL" } };
    expect(parseConfig(file, { DATABASE_URL: PG, FINALITY_DB: "./y.db" }).store).toEqual({
      sqlite: "./y.db",
      synchronous: "NORMAL",
    });
  });

  it("FINALITY_DB keeps the file's page cache size", () => {
    const file = { store: { sqlite: "./x.db", cacheMiB: 32 } };
    expect(parseConfig(file, { FINALITY_DB: "./y.db" }).store).toEqual({
      sqlite: "./y.db",
      synchronous: "FULL",
      cacheMiB: 32,
    });
  });

  it("refuses a page cache that is not a whole number of MiB from 1", () => {
    for (const cacheMiB of [0, -4, 2.5, "8"]) {
      expect(() => parseConfig({ store: { sqlite: "./x.db", cacheMiB } }, {})).toThrow(/store\.cacheMiB/);
    }
  });
});
