import { describe } from "vitest";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { dropSchema, POSTGRES_TEST_URL, postgresSuite, uniqueSchemaName } from "../helpers/postgres.js";
import { runStoreContract } from "./contract.js";

const { admin } = await postgresSuite("PostgreSQL store contract");

describe("PostgreSQL", () => {
  // Every test gets its own freshly created schema, dropped afterwards: runs never see each other's rows.
  runStoreContract("postgres schema", async () => {
    const schema = uniqueSchemaName();
    const open = () => openPostgresStore({ url: POSTGRES_TEST_URL, schema, max: 4 });
    return {
      store: await open(),
      reopen: open,
      openSecond: open,
      cleanup: async () => {
        await dropSchema(admin, schema);
      },
    };
  });
});
