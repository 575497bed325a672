import { afterEach, describe, expect, it } from "vitest";
import { countingProxy } from "../../bench/lib/counting-proxy.js";
import type { Observation } from "../../src/core/model.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createClient, type TxSql } from "../../src/store/postgres/postgres-client.js";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createPostgresTx } from "../../src/store/postgres/postgres-tx.js";
import { engineOf } from "../helpers/engine.js";
import { dropSchema, POSTGRES_TEST_URL, postgresSuite, uniqueSchemaName } from "../helpers/postgres.js";
import { T0 } from "../helpers/records.js";

// On PostgreSQL each statement sent alone is a round trip, so ingest's statement count is its
// latency floor and its throughput ceiling: the combined statements (StoreTx.loadForIngest,
// writeJobWithEvent) must be the ones a webhook's transaction actually sends. The answers they
// give (duplicates, tombstones, parked rows) are the store contract's and postgres-store's tests.
const { admin } = await postgresSuite("PostgreSQL ingest statements");

describe("PostgreSQL ingest statements", () => {
  let schema = "";
  const stores: PostgresStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await dropSchema(admin, schema);
  });

  /** A store behind the counting proxy: one ingest counted, or several started in one turn (one group). */
  async function counted() {
    schema = uniqueSchemaName();
    stores.push(await openPostgresStore({ url: POSTGRES_TEST_URL, schema }));
    const target = new URL(POSTGRES_TEST_URL);
    const proxy = await countingProxy({ host: target.hostname, port: Number(target.port || 5432) });
    // Migrated above, opened here without migrating: only ingest's statements are counted.
    const store = await openPostgresStore({ url: proxy.url(POSTGRES_TEST_URL), schema, migrate: false });
    stores.push(store);
    const engine = engineOf(createFinality({ store }));
    // The pool's connection opened before counting: a connection's start-up is not ingest's.
    await store.transaction(async (tx) => tx.getJob({ provider: "generic", id: "warm" }));
    const ingest = async (obs: Observation) => {
      proxy.start();
      const outcome = await engine.ingestTrusted(obs);
      const { statements, roundTrips } = proxy.stop();
      return { outcome, statements, roundTrips };
    };
    const ingestAll = async (observations: Observation[]) => {
      proxy.start();
      const outcomes = await Promise.all(observations.map((obs) => engine.ingestTrusted(obs)));
      const { statements, roundTrips } = proxy.stop();
      return { outcomes, statements, roundTrips };
    };
    return { ingest, ingestAll, store, close: () => proxy.close() };
  }

  const webhook = (id: string, state: string, seq: number, deliveryId: string): Observation => ({
    provider: "generic",
    id,
    state,
    source: "webhook",
    seq,
    deliveryId,
  });

  it("a new job: BEGIN with the delivery and the job read, the insert (with its tombstone read and event), COMMIT", async () => {
    const { ingest, close } = await counted();
    try {
      const { outcome, statements, roundTrips } = await ingest(webhook("job-1", "running", 1, "d-1"));
      expect(outcome).toMatchObject({ applied: true });
      expect(statements).toBe(4);
      // BEGIN goes out with the load, in one round trip.
      expect(roundTrips).toBe(3);
    } finally {
      await close();
    }
  });

  it("a known job: BEGIN with the delivery and the job read, the update with its event, COMMIT", async () => {
    const { ingest, close } = await counted();
    try {
      await ingest(webhook("job-1", "pending", 1, "d-1"));
      const { outcome, statements, roundTrips } = await ingest(webhook("job-1", "running", 2, "d-2"));
      expect(outcome).toMatchObject({ applied: true });
      expect(statements).toBe(4);
      expect(roundTrips).toBe(3);
    } finally {
      await close();
    }
  });

  it("a redelivery: BEGIN with the delivery read, its event, the job read again, COMMIT", async () => {
    const { ingest, close } = await counted();
    try {
      await ingest(webhook("job-1", "running", 1, "d-1"));
      const { outcome, statements, roundTrips } = await ingest(webhook("job-1", "running", 1, "d-1"));
      expect(outcome).toMatchObject({ applied: false, reason: "duplicate-delivery" });
      expect(outcome.job?.state).toBe("running");
      expect(statements).toBe(5);
      expect(roundTrips).toBe(4);
    } finally {
      await close();
    }
  });

  it("a group of 16 ingests: BEGIN with every load, then every write, then COMMIT: three round trips", async () => {
    const { ingestAll, store, close } = await counted();
    try {
      const webhooks = Array.from({ length: 16 }, (_, i) => webhook(`job-${i}`, "running", 1, `d-${i}`));
      const { outcomes, statements, roundTrips } = await ingestAll(webhooks);
      expect(outcomes.every((outcome) => outcome.applied)).toBe(true);
      expect(store.groupCommitStats().largestBatch).toBe(16);
      // Each caller's load and write (2 × 16), BEGIN and COMMIT: one after another, 33 round trips.
      expect(statements).toBe(34);
      expect(roundTrips).toBe(3);
    } finally {
      await close();
    }
  });

  it("batch-mates of one job run one after another in the group: the second reads what the first wrote", async () => {
    const { ingestAll, store, close } = await counted();
    try {
      const webhooks = [
        webhook("job-a", "running", 1, "a-1"),
        webhook("job-b", "running", 1, "b-1"),
        webhook("job-a", "running", 2, "a-2"),
        webhook("job-a", "succeeded", 3, "a-3"),
      ];
      const { outcomes } = await ingestAll(webhooks);
      expect(outcomes.map((outcome) => [outcome.applied, outcome.job?.version])).toEqual([
        [true, 1],
        [true, 1],
        [true, 2],
        [true, 3],
      ]);
      // Run at once, job-a's second and third would read the job before the first's insert and
      // lose the compare-and-set: the group rolled back and run again, one savepoint each.
      expect(store.groupCommitStats()).toMatchObject({ largestBatch: 4, retries: { "version-conflict": 0 } });
    } finally {
      await close();
    }
  });

  it("the load sent with BEGIN records nothing outside a transaction (were BEGIN to fail, it would run alone)", async () => {
    schema = uniqueSchemaName();
    stores.push(await openPostgresStore({ url: POSTGRES_TEST_URL, schema }));
    const sql = createClient({ url: POSTGRES_TEST_URL, schema, max: 1 });
    try {
      // Each statement on its own, committed as it runs: what the load meets after a failed BEGIN.
      const alone: TxSql = {
        unsafe: (text, values, options) => sql.unsafe(text, values, { prepare: options?.prepare ?? false }),
        savepoint: () => Promise.reject(new Error("not in a transaction")),
      };
      const loaded = await createPostgresTx(alone).loadForIngest?.(
        { provider: "generic", id: "job-1" },
        "d-1",
        T0,
      );
      expect(loaded).toEqual({ duplicate: true, job: null });
      const [row] = await sql.unsafe<{ n: number }>("SELECT count(*)::int AS n FROM deliveries");
      expect(row?.n).toBe(0);
    } finally {
      await sql.end();
    }
  });

  it("a BEGIN that fails fails its transaction, though the load went out with it, and nothing is stored", async () => {
    schema = uniqueSchemaName();
    stores.push(await openPostgresStore({ url: POSTGRES_TEST_URL, schema }));
    const sql = createClient({ url: POSTGRES_TEST_URL, schema, max: 1 });
    try {
      // A mode the server refuses: a BEGIN that fails while its connection lives on.
      const outcome = sql.begin("isolation level nonsense", async (tx) =>
        createPostgresTx(tx).loadForIngest?.({ provider: "generic", id: "job-1" }, "d-1", T0),
      );
      await expect(outcome).rejects.toThrow(/syntax error/);
      const [row] = await sql.unsafe<{ n: number }>("SELECT count(*)::int AS n FROM deliveries");
      expect(row?.n).toBe(0);
    } finally {
      await sql.end();
    }
  });
});
