import { afterAll, describe } from "vitest";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  postgresTestsEnabled,
  uniqueSchemaName,
} from "../helpers/postgres.js";
import { runStoreContract } from "./contract.js";

const enabled = await postgresTestsEnabled("PostgreSQL store contract");
const admin = enabled ? adminClient() : null;

afterAll(async () => {
  await admin?.end({ timeout: 5 });
});

describe.skipIf(!enabled)("PostgreSQL", () => {
  // Every test gets its own freshly created schema, dropped afterwards: runs never see each other's rows.
  runStoreContract("postgres schema", async () => {
    const schema = uniqueSchemaName();
    const open = () => openPostgresStore({ url: POSTGRES_TEST_URL, schema, max: 4 });
    return {
      store: await open(),
      reopen: open,
      openSecond: open,
      cleanup: async () => {
        if (admin) await dropSchema(admin, schema);
      },
    };
  });
});
