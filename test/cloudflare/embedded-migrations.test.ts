import { describe, expect, it } from "vitest";
import { SQLITE_MIGRATIONS } from "../../src/cloudflare/sqlite-migrations.js";
import { loadMigrations } from "../../src/store/migrations.js";

describe("migrations embedded for Workers", () => {
  it("are exactly migrations/sqlite/*.sql (run `node scripts/embed-migrations.mjs` after editing those)", () => {
    expect(SQLITE_MIGRATIONS).toEqual(loadMigrations("sqlite"));
  });
});
