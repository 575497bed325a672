import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  requirePostgres,
  uniqueSchemaName,
} from "../helpers/postgres.js";
import { makeJob } from "../helpers/records.js";
import { tempDir } from "../helpers/temp-dir.js";

// What wakes a wait for settlements, with the fallback poll set to an hour so that only the
// mechanism under test can: this process's own commit on SQLite, another replica's NOTIFY on
// PostgreSQL, and the LISTEN connection opened again after the server killed it.
// The SQLite tests here run without PostgreSQL; the PostgreSQL ones fail without it (requirePostgres).
const admin = adminClient();
afterAll(() => admin.end({ timeout: 5 }));
const HOUR = 3_600_000;
let ids = 0;
const settleOne = (store: Store) =>
  store.transaction(async (tx) => {
    await tx.insertJob(makeJob({ id: `woken-${++ids}`, state: "succeeded" }));
  });

describe("settlement wake-ups", () => {
  const stores: Store[] = [];
  const dir = tempDir("finality-wake-");
  let schema = "";
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    if (schema) await dropSchema(admin, schema);
    schema = "";
  });

  it("SQLite: this process's commit wakes the waiter at once", async () => {
    const store = createSqliteStore({ path: dir.file(`wake-${ids}.db`), settlementPollMs: HOUR });
    stores.push(store);
    await store.readSettlements({});
    const woken = store.settlementCommitted();
    await settleOne(store);
    await woken;
    expect((await store.readSettlements({})).items).toHaveLength(1);
  }, 30_000);

  it("PostgreSQL: another replica's commit wakes the waiter through NOTIFY, also after the listener was killed", async () => {
    await requirePostgres("settlement wake-ups on PostgreSQL");
    schema = uniqueSchemaName("finality_wake");
    const open = async () => {
      const store: PostgresStore = await openPostgresStore({
        url: POSTGRES_TEST_URL,
        schema,
        max: 3,
        settlementPollMs: HOUR,
      });
      stores.push(store);
      return store;
    };
    const [waiting, writing] = [await open(), await open()];
    // The first wait opens the LISTEN connection; it wakes its waiters once it listens.
    await waiting.settlementCommitted();
    const woken = waiting.settlementCommitted();
    await settleOne(writing);
    await woken;
    expect((await waiting.readSettlements({})).items).toHaveLength(1);

    // The server ends the listener: it is opened again, and says so by waking the waiters.
    const reconnected = waiting.settlementCommitted();
    await admin.unsafe("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [
      `finality-settlements ${schema}`.slice(0, 63),
    ]);
    await reconnected;
    const wokenAgain = waiting.settlementCommitted();
    await settleOne(writing);
    await wokenAgain;
    expect((await waiting.readSettlements({})).items).toHaveLength(2);
  }, 60_000);
});
