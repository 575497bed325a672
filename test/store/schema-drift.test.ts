import { describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { dropSchema, POSTGRES_TEST_URL, postgresSuite, uniqueSchemaName } from "../helpers/postgres.js";
import { postgresSchemaDump, sqliteSchemaDump } from "./schema/dump.js";

// The schema every migration builds, against the dump committed beside it: a migration that
// changes the schema without its dump (or a dump edited by hand) fails here. After a deliberate
// schema change, rewrite the dumps with `npx vitest run test/store/schema-drift.test.ts -u` and
// commit them with the migration; the diff is the schema change to review.
const { admin } = await postgresSuite("PostgreSQL schema dump");

describe("schema drift", () => {
  it("SQLite: sqlite_master after every migration is test/store/schema/sqlite.sql", async () => {
    await expect(sqliteSchemaDump()).toMatchFileSnapshot("./schema/sqlite.sql");
  });

  it("PostgreSQL: the catalog after every migration is test/store/schema/postgres.txt", async () => {
    const schema = uniqueSchemaName("finality_rows_schema");
    const store = await openPostgresStore({ url: POSTGRES_TEST_URL, schema, max: 1 });
    try {
      await store.close();
      await expect(await postgresSchemaDump(admin, schema)).toMatchFileSnapshot("./schema/postgres.txt");
    } finally {
      await dropSchema(admin, schema);
    }
  });
});
