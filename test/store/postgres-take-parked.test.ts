import { afterEach, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import {
  dropSchema,
  lockWaiters,
  POSTGRES_TEST_URL,
  postgresSuite,
  uniqueSchemaName,
} from "../helpers/postgres.js";

// takeParked is one round trip (migration 0012's take_parked): the advisory lock per job key, then
// the DELETE, in a VOLATILE function so that the DELETE reads after the lock is held. A row parked
// by a transaction that commits while the taker waits for the lock must be taken, not left behind.
const { admin } = await postgresSuite("PostgreSQL takeParked");

describe("PostgreSQL takeParked", () => {
  let schema = "";
  let store: PostgresStore | undefined;
  afterEach(async () => {
    await store?.close();
    await dropSchema(admin, schema);
  });

  it("takes a row parked by a transaction that committed while it waited for the job's lock", async () => {
    schema = uniqueSchemaName("finality_take_parked");
    const name = schema.slice(-40);
    const url = new URL(POSTGRES_TEST_URL);
    url.searchParams.set("application_name", name);
    store = await openPostgresStore({ url: url.toString(), schema });
    let commit = () => {};
    const held = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let locked = () => {};
    const parkerHolds = new Promise<void>((resolve) => {
      locked = resolve;
    });
    // A parker: the job's lock first, as parkObservation takes it, then its row, then it waits.
    const parker = admin.begin(async (tx) => {
      await tx.unsafe("SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 0))", ["generic", "j"]);
      await tx.unsafe(
        `INSERT INTO "${schema}".parked (provider, job_id, delivery_id, parked_at, observation)
         VALUES ('generic', 'j', 'd-1', now(), '{"provider":"generic","id":"j","state":"succeeded","source":"webhook"}')`,
      );
      locked();
      await held;
    });
    await parkerHolds;
    const taking = store.transaction((tx) => tx.takeParked({ provider: "generic", id: "j" }));
    try {
      // The taker waits on the parker's lock; only then does the parker commit.
      await expect.poll(() => lockWaiters(admin, name), { timeout: 5000 }).toBe(1);
    } finally {
      commit();
      await parker;
    }
    const taken = await taking;
    expect(taken.map((p) => [p.deliveryId, p.observation.state])).toEqual([["d-1", "succeeded"]]);
    expect(
      (await admin.unsafe<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".parked`))[0]?.n,
    ).toBe(0);
  });
});
