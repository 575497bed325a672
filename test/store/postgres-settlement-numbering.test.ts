import { afterEach, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { jobLockOrder } from "../../src/store/store.js";
import {
  dropSchema,
  lockWaiters,
  POSTGRES_TEST_URL,
  postgresSuite,
  uniqueSchemaName,
} from "../helpers/postgres.js";
import { makeJob } from "../helpers/records.js";

// Settlements are numbered when read (migration 0016), under the schema's advisory lock, and a
// settling COMMIT takes no lock at all: replicas' commits do not queue behind one another (issue
// 29). Migration 0007 numbered them at COMMIT under that lock, held through the commit's flush.
// The order this keeps is tested by postgres-settlement-order.test.ts.
const { admin } = await postgresSuite("PostgreSQL settlement numbering");

const LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('finality.settlements/' || $1, 0))";

describe("PostgreSQL settlements numbered when read", () => {
  let schema = "";
  let store: PostgresStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
    await dropSchema(admin, schema);
  });

  async function open(prefix: string) {
    schema = uniqueSchemaName(prefix);
    const name = schema.slice(-40);
    const url = new URL(POSTGRES_TEST_URL);
    url.searchParams.set("application_name", name);
    // One group at a time: the two callers below share one transaction and one COMMIT.
    store = await openPostgresStore({ url: url.toString(), schema, groupCommitConcurrency: 1 });
    return { store, name };
  }

  /** Holds the numbering lock in a transaction of its own until `release` is called. */
  async function holdNumberingLock() {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const holding = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const peer = admin.begin(async (tx) => {
      await tx.unsafe(LOCK, [schema]);
      locked();
      await held;
    });
    await holding;
    return {
      async release() {
        release();
        await peer;
      },
    };
  }

  const unnumbered = async () =>
    (
      await admin.unsafe<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema}".settlements WHERE settlement_no IS NULL`,
      )
    )[0]?.n;

  it("a group of settling transactions commits while another holds the numbering lock; a reader waits for it, then sees them", async () => {
    const { store, name } = await open("finality_number_lock");
    const lock = await holdNumberingLock();
    const jobs = ["a", "b"].map((id) => makeJob({ id, state: "succeeded" }));
    let reading: ReturnType<PostgresStore["readSettlements"]> | undefined;
    try {
      // Under 0007's commit-time numbering these COMMITs would wait here until the lock is let go.
      const settled = await Promise.all(
        jobs.map((job) => store.transaction((tx) => tx.insertJob(job), { lockOrder: jobLockOrder(job) })),
      );
      expect(settled).toEqual([true, true]);
      expect(store.groupCommitStats()).toMatchObject({ batches: 1, batchedCallers: 2 });
      expect(await unnumbered()).toBe(2);
      // A reader numbers before it reads, so it waits for the lock's holder.
      reading = store.readSettlements({});
      await expect.poll(() => lockWaiters(admin, name), { timeout: 5000 }).toBe(1);
    } finally {
      await lock.release();
    }
    const page = await reading;
    expect(page?.items.map((s) => s.id)).toEqual(["a", "b"]);
    expect(await unnumbered()).toBe(0);
  }, 15_000);

  it("settlements nobody read are numbered by retention before it counts or prunes them", async () => {
    const { store } = await open("finality_number_retention");
    for (const id of ["a", "b", "c"])
      await store.transaction((tx) => tx.insertJob(makeJob({ id, state: "failed" })));
    expect(await unnumbered()).toBe(3);
    const later = Date.now() + 86_400_000;
    expect(await store.countPrunable("settlements", later)).toBe(3);
    expect(await unnumbered()).toBe(0);
    await store.transaction((tx) => tx.insertJob(makeJob({ id: "d", state: "failed" })));
    expect(await store.prune("settlements", later, 100)).toBe(4);
    expect(await store.readSettlements({})).toMatchObject({ items: [] });
  });

  it("settlements committed one after another, unread between, keep commit order though their settlement times say otherwise", async () => {
    const { store } = await open("finality_number_commit_order");
    // Replicas' clocks disagree: each job settles "earlier" than the one committed before it.
    const ids = ["first", "second", "third", "fourth"];
    for (const [i, id] of ids.entries()) {
      await store.transaction((tx) =>
        tx.insertJob(makeJob({ id, state: "succeeded", settledAt: 1_800_000_000_000 - i * 60_000 })),
      );
    }
    expect(await unnumbered()).toBe(4);
    expect((await store.readSettlements({})).items.map((s) => s.id)).toEqual(ids);
  });
});
