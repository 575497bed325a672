import { afterAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/store/postgres/postgres-client.js";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  requirePostgres,
  uniqueSchemaName,
} from "../helpers/postgres.js";

// PostgreSQL answers COMMIT with ROLLBACK, and no error, in a transaction where a statement failed:
// work that caught that statement's error must not be told that its writes are stored.

const admin = adminClient();
afterAll(() => admin.end({ timeout: 5 }));

describe("a transaction whose failed statement was caught", () => {
  it("rejects at COMMIT instead of resolving, and stores nothing", async () => {
    await requirePostgres("COMMIT answered with ROLLBACK");
    const schema = uniqueSchemaName("finality_rollback");
    await admin.unsafe(`CREATE SCHEMA "${schema}"`);
    await admin.unsafe(`CREATE TABLE "${schema}".t (id int PRIMARY KEY)`);
    const sql = createClient({ url: POSTGRES_TEST_URL, schema, max: 1 });
    try {
      const outcome = sql
        .begin(async (tx) => {
          await tx.unsafe("INSERT INTO t VALUES (1)");
          await tx.unsafe("INSERT INTO t VALUES (1)").catch(() => "duplicate key, caught");
          return "done";
        })
        .then(
          (value) => ({ resolved: value }),
          (error: Error) => ({ rejected: error.message }),
        );
      expect(await outcome).toEqual({ rejected: expect.stringContaining("rolled back at COMMIT") });
      expect(await admin.unsafe(`SELECT id FROM "${schema}".t`)).toHaveLength(0);
      // The connection is usable afterwards.
      await expect(sql.begin(async (tx) => tx.unsafe("INSERT INTO t VALUES (2)"))).resolves.toBeDefined();
    } finally {
      await sql.end({ timeout: 5 });
      await dropSchema(admin, schema);
    }
  });

  it("with a transaction's own lock_timeout (its COMMIT restores the default first), also rejects and stores nothing", async () => {
    await requirePostgres("COMMIT answered with ROLLBACK");
    const schema = uniqueSchemaName("finality_rollback_lt");
    await admin.unsafe(`CREATE SCHEMA "${schema}"`);
    await admin.unsafe(`CREATE TABLE "${schema}".t (id int PRIMARY KEY)`);
    const sql = createClient({ url: POSTGRES_TEST_URL, schema, max: 1 });
    try {
      const outcome = sql.begin(
        "isolation level read committed",
        async (tx) => {
          await tx.unsafe("INSERT INTO t VALUES (1)");
          await tx.unsafe("INSERT INTO t VALUES (1)").catch(() => "duplicate key, caught");
          return "done";
        },
        { lockTimeoutMs: 20 },
      );
      await expect(outcome).rejects.toThrow();
      expect(await admin.unsafe(`SELECT id FROM "${schema}".t`)).toHaveLength(0);
      await expect(sql.begin(async (tx) => tx.unsafe("INSERT INTO t VALUES (2)"))).resolves.toBeDefined();
    } finally {
      await sql.end({ timeout: 5 });
      await dropSchema(admin, schema);
    }
  });
});
