import { afterEach, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { jobLockOrder } from "../../src/store/store.js";
import { dropSchema, POSTGRES_TEST_URL, postgresSuite, uniqueSchemaName } from "../helpers/postgres.js";
import { makeJob } from "../helpers/records.js";

// A grouped transaction waits at most 20 ms for a row lock (postgres-group-commit.ts), but its
// COMMIT also takes the settlement feed's numbering lock (migration 0007), which every settling
// COMMIT of every replica holds for a moment. That wait is not cut at 20 ms: a group that settles
// jobs while another COMMIT numbers its settlements commits once the lock is free.
const { admin } = await postgresSuite("PostgreSQL commit lock wait");

describe("PostgreSQL COMMIT under the group's short lock_timeout", () => {
  let schema = "";
  let store: PostgresStore | undefined;
  afterEach(async () => {
    await store?.close();
    await dropSchema(admin, schema);
  });

  it("a settling transaction commits after waiting longer than 20 ms for the settlement numbering lock", async () => {
    schema = uniqueSchemaName("finality_commit_lock");
    const name = schema.slice(-40);
    const url = new URL(POSTGRES_TEST_URL);
    url.searchParams.set("application_name", name);
    // One group at a time: the two callers below share one transaction and one COMMIT.
    store = await openPostgresStore({ url: url.toString(), schema, groupCommitConcurrency: 1 });
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const holding = new Promise<void>((resolve) => {
      locked = resolve;
    });
    // Another COMMIT numbering its settlements, frozen while it holds the lock.
    const peer = admin.begin(async (tx) => {
      await tx.unsafe("SELECT pg_advisory_xact_lock(hashtextextended('finality.settlements/' || $1, 0))", [
        schema,
      ]);
      locked();
      await held;
    });
    await holding;
    const jobs = ["a", "b"].map((id) => makeJob({ id, state: "succeeded" }));
    const settling = Promise.all(
      jobs.map((job) => store?.transaction((tx) => tx.insertJob(job), { lockOrder: jobLockOrder(job) })),
    );
    try {
      await expect
        .poll(
          async () =>
            (
              await admin.unsafe<{ n: number }>(
                "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
                [name],
              )
            )[0]?.n,
          { timeout: 5000 },
        )
        .toBe(1);
      // Well past the 20 ms the work's own lock waits are cut at.
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      release();
      await peer;
    }
    expect(await settling).toEqual([true, true]);
    expect(store.groupCommitStats()).toMatchObject({ batches: 1, batchedCallers: 2 });
    for (const job of jobs) expect((await store.getJob(job))?.state).toBe("succeeded");
  });
});
