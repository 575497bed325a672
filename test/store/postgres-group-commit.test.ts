import { afterEach, describe, expect, it } from "vitest";
import { countingProxy } from "../../bench/lib/counting-proxy.js";
import { parseConfig } from "../../src/config/load-config.js";
import { FinalityError, isFinalityError } from "../../src/core/errors.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { postgresStoreOptions } from "../../src/host/node/finality-from-config.js";
import {
  openPostgresStore,
  type PostgresStore,
  type PostgresStoreOptions,
} from "../../src/store/postgres/postgres-store.js";
import { jobLockOrder, type StoreTx } from "../../src/store/store.js";
import { dropSchema, POSTGRES_TEST_URL, postgresSuite, uniqueSchemaName } from "../helpers/postgres.js";
import { makeJob } from "../helpers/records.js";

// Group commit on PostgreSQL (postgres-group-commit.ts): concurrent transactions with a lock
// order share one transaction, their works run at once (a savepoint each only after a failure),
// answered only after the shared COMMIT.
const { admin } = await postgresSuite("PostgreSQL group commit");

const key = (id: string) => ({ provider: "generic", id });
const order = (id: string) => ({ lockOrder: jobLockOrder(key(id)) });
const insert = (id: string) => async (tx: StoreTx) => tx.insertJob(makeJob({ id }));
const outcomes = (results: PromiseSettledResult<unknown>[]) =>
  results.map((r) =>
    r.status === "fulfilled" ? "ok" : isFinalityError(r.reason) ? r.reason.code : String(r.reason),
  );

describe("PostgreSQL group commit", () => {
  let schema = "";
  let stores: PostgresStore[] = [];
  async function open(options: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> {
    const store = await openPostgresStore({ url: POSTGRES_TEST_URL, schema, max: 4, ...options });
    stores.push(store);
    return store;
  }
  afterEach(async () => {
    for (const store of stores) await store.close();
    stores = [];
    await dropSchema(admin, schema);
    schema = "";
  });
  const fresh = () => {
    schema = uniqueSchemaName("finality_perf_gc");
  };

  it("commits batch-mates of a failing caller and rolls back only that caller's writes", async () => {
    fresh();
    const store = await open({ groupCommitConcurrency: 1 });
    const before = store.groupCommitStats().batches;
    const results = await Promise.allSettled([
      store.transaction(insert("a"), order("a")),
      store.transaction(async (tx) => {
        await tx.insertJob(makeJob({ id: "b" }));
        throw new Error("the caller's own failure");
      }, order("b")),
      store.transaction(async (tx) => {
        await tx.insertJob(makeJob({ id: "c" }));
        // A failing statement: on PostgreSQL it aborts the transaction until a rollback.
        await tx.execute("SELECT 1 / 0");
      }, order("c")),
      store.transaction(insert("d"), order("d")),
    ]);
    expect(outcomes(results)).toEqual(["ok", "Error: the caller's own failure", "internal", "ok"]);
    // One shared transaction held all four.
    expect(store.groupCommitStats().batches - before).toBe(1);
    expect((await store.getJob(key("a")))?.id).toBe("a");
    expect(await store.getJob(key("b"))).toBeNull();
    expect(await store.getJob(key("c"))).toBeNull();
    expect((await store.getJob(key("d")))?.id).toBe("d");
  });

  it("a group that does not fail costs BEGIN, its callers' statements and COMMIT: no savepoint per caller", async () => {
    fresh();
    await (await open()).close();
    const target = new URL(POSTGRES_TEST_URL);
    const proxy = await countingProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      // Migrated above and opened here without migrating: only the group's statements are counted.
      const store = await open({
        url: proxy.url(POSTGRES_TEST_URL),
        migrate: false,
        groupCommitConcurrency: 1,
      });
      await store.transaction(insert("warm"));
      proxy.start();
      const results = await Promise.all(
        ["a", "b", "c", "d"].map((id) => store.transaction(insert(id), order(id))),
      );
      const counts = proxy.stop();
      expect(results).toEqual([true, true, true, true]);
      expect(store.groupCommitStats()).toMatchObject({ batches: 1, batchedCallers: 4 });
      // BEGIN, four inserts, COMMIT; with a savepoint per caller it was ten.
      expect(counts.statements).toBe(6);
    } finally {
      for (const store of stores) await store.close();
      stores = [];
      await proxy.close();
    }
  });

  it("batch-mates run at once, but a savepoint is its caller's alone: a failed statement it catches spoils no one else's", async () => {
    fresh();
    const store = await open({ groupCommitConcurrency: 1 });
    const results = await Promise.all([
      store.transaction(async (tx) => {
        await tx.insertJob(makeJob({ id: "a" }));
        // Caught: execute's savepoint keeps the transaction usable, as on SQLite.
        await tx.execute("SELECT 1 / 0").catch(() => {});
        return tx.insertJob(makeJob({ id: "a-after" }));
      }, order("a")),
      // Each in a savepoint of its own too, open while the others send.
      ...["b", "c", "d"].map((id) =>
        store.transaction(async (tx) => {
          await tx.execute("SELECT pg_sleep(0.001)");
          return tx.insertJob(makeJob({ id }));
        }, order(id)),
      ),
    ]);
    expect(results).toEqual([true, true, true, true]);
    // One group, and nobody ran twice: no statement of another caller fell into a savepoint.
    expect(store.groupCommitStats()).toMatchObject({ batches: 1, batchedCallers: 4, lockRetries: 0 });
    expect(store.groupCommitStats().retries).toEqual({
      deadlock: 0,
      serialization: 0,
      "version-conflict": 0,
      "lock-busy": 0,
      "not-last": 0,
    });
    for (const id of ["a", "a-after", "b", "c", "d"]) expect((await store.getJob(key(id)))?.id).toBe(id);
  });

  it("tells no caller success when the connection dies before the shared COMMIT", async () => {
    fresh();
    const store = await open({ groupCommitConcurrency: 1 });
    const results = await Promise.allSettled([
      store.transaction(insert("a"), order("a")),
      store.transaction(async (tx) => {
        await tx.insertJob(makeJob({ id: "b" }));
        const [row] = await tx.execute("SELECT pg_backend_pid() AS pid");
        await admin.unsafe("SELECT pg_terminate_backend($1)", [row?.pid as number]);
        return tx.getJob(key("b"));
      }, order("b")),
      store.transaction(insert("c"), order("c")),
    ]);
    expect(outcomes(results)).toEqual(["store-unavailable", "store-unavailable", "store-unavailable"]);
    for (const id of ["a", "b", "c"]) expect(await store.getJob(key(id))).toBeNull();
    // The pool replaced the dead connection: the next group commits.
    const after = await Promise.all([
      store.transaction(insert("a"), order("a")),
      store.transaction(insert("c"), order("c")),
    ]);
    expect(after).toEqual([true, true]);
  });

  it("two stores batching the same jobs in opposite orders do not deadlock", async () => {
    fresh();
    const [first, second] = [await open(), await open()];
    const ids = Array.from({ length: 12 }, (_, i) => `job-${String(i).padStart(2, "0")}`);
    for (const id of ids) await first.transaction(insert(id));
    // Each work locks its job's row and holds it a moment, so that the two stores' groups overlap.
    const bump = (store: PostgresStore, id: string) =>
      store.transaction(async (tx) => {
        const job = await tx.getJob(key(id));
        if (!job) throw new Error(`no ${id}`);
        await tx.execute("SELECT pg_sleep(0.005)");
        return tx.updateJob({ ...job, version: job.version + 1 }, job.version);
      }, order(id));
    const results = await Promise.all([
      ...ids.map((id) => bump(first, id)),
      ...[...ids].reverse().map((id) => bump(second, id)),
    ]);
    expect(results.every(Boolean)).toBe(true);
    const stats = [first.groupCommitStats(), second.groupCommitStats()];
    expect(stats.map((s) => s.batches > 0)).toEqual([true, true]);
    // Without the shared lock order, these groups deadlock and callers are re-queued.
    expect(stats.map((s) => s.lockRetries)).toEqual([0, 0]);
    for (const id of ids) expect((await first.getJob(key(id)))?.version).toBe(3);
  });

  it("groupCommitMaxBatch bounds a group, and 1 turns group commit off", async () => {
    fresh();
    const batched = await open({ groupCommitMaxBatch: 3, groupCommitConcurrency: 1 });
    await Promise.all(
      ["a", "b", "c", "d", "e", "f", "g"].map((id) => batched.transaction(insert(id), order(id))),
    );
    expect(batched.groupCommitStats().largestBatch).toBe(3);
    const off = await open({ groupCommitMaxBatch: 1 });
    await Promise.all(["h", "i", "j"].map((id) => off.transaction(insert(id), order(id))));
    expect(off.groupCommitStats().batches).toBe(0);
  });

  it("store.groupCommitMaxBatch and store.groupCommitMaxWaitMs from the configuration reach the group commit", async () => {
    fresh();
    const config = parseConfig(
      { store: { postgres: POSTGRES_TEST_URL, schema, groupCommitMaxBatch: 2, groupCommitMaxWaitMs: 5 } },
      {},
    );
    const options = postgresStoreOptions(config.store as Extract<typeof config.store, { postgres: string }>);
    expect(options).toMatchObject({ groupCommitMaxBatch: 2, groupCommitMaxWaitMs: 5 });
    const store = await open({ ...options, groupCommitConcurrency: 1 });
    // Enqueued one after another in separate turns of the event loop: only the 5 ms window
    // collects them into groups (with no wait, the first would start alone).
    const first = store.transaction(insert("a"), order("a"));
    await new Promise((resolve) => setImmediate(resolve));
    const rest = ["b", "c", "d"].map((id) => store.transaction(insert(id), order(id)));
    await Promise.all([first, ...rest]);
    expect(store.groupCommitStats()).toMatchObject({ largestBatch: 2, batchedCallers: 4 });
  });

  it("the ledger's ingests and registrations carry a lock order, so they are grouped", async () => {
    fresh();
    const store = await open({ groupCommitConcurrency: 1 });
    const finality = createFinality({ store });
    const ids = ["a", "b", "c", "d"];
    await Promise.all(ids.map((id) => finality.register({ provider: "generic", id })));
    const afterRegister = store.groupCommitStats().batchedCallers;
    await Promise.all(
      ids.map((id) =>
        finality.ingest({
          provider: "generic",
          id,
          state: "running",
          source: "webhook",
          deliveryId: `d-${id}`,
        }),
      ),
    );
    // Each call reaches the store in the turn it was made: the four share one group.
    expect(afterRegister).toBe(4);
    expect(store.groupCommitStats().batchedCallers - afterRegister).toBe(4);
    for (const id of ids) expect((await store.getJob(key(id)))?.state).toBe("running");
  });

  it("counts each caller's re-runs by reason: deadlock, serialization failure, version conflict", async () => {
    schema = uniqueSchemaName("finality_leftovers_gc_retries");
    const store = await open({ groupCommitConcurrency: 1 });
    /** Work that fails once as told, then inserts its job. */
    const failingOnce = (id: string, fail: (tx: StoreTx) => Promise<unknown>) => {
      let failed = false;
      return async (tx: StoreTx) => {
        if (!failed) {
          failed = true;
          await fail(tx);
        }
        return tx.insertJob(makeJob({ id }));
      };
    };
    const raise = (code: string) => (tx: StoreTx) =>
      tx.execute(`DO $$ BEGIN RAISE EXCEPTION 'as if' USING ERRCODE = '${code}'; END $$`);
    const results = await Promise.all([
      store.transaction(failingOnce("a", raise("40P01")), order("a")),
      store.transaction(failingOnce("b", raise("40001")), order("b")),
      // Two deadlocks, one serialization failure: a count under the wrong reason shows.
      store.transaction(failingOnce("e", raise("40P01")), order("e")),
      store.transaction(
        failingOnce("c", async () => {
          throw new FinalityError("version-conflict", "lost the race");
        }),
        order("c"),
      ),
      store.transaction(insert("d"), order("d")),
    ]);
    expect(results).toEqual([true, true, true, true, true]);
    expect(store.groupCommitStats()).toMatchObject({
      lockRetries: 3,
      retries: { deadlock: 2, serialization: 1, "version-conflict": 1 },
    });
  });

  /** Another session (a frozen replica's) holding `id`'s row lock until `release` is called. */
  async function peerLocks(id: string) {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const taken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const done = admin?.begin(async (tx) => {
      await tx.unsafe(`SELECT 1 FROM "${schema}".jobs WHERE id = $1 FOR UPDATE`, [id]);
      locked();
      await held;
    });
    await taken;
    return { release, done };
  }
  /** Locks `id`'s row (as an ingest does) and bumps its version; resolves with ms taken. */
  const bump = (store: PostgresStore, id: string) => {
    const started = performance.now();
    return store
      .transaction(async (tx) => {
        const job = await tx.getJob(key(id));
        if (!job) throw new Error(`no ${id}`);
        return tx.updateJob({ ...job, version: job.version + 1 }, job.version);
      }, order(id))
      .then(() => performance.now() - started);
  };

  it("a row locked by a stalled peer holds none of the waiting caller's batch-mates; it commits once the lock is free", async () => {
    fresh();
    // One group at a time: the caller for the locked job and the others share the groups.
    const store = await open({ groupCommitConcurrency: 1, lockTimeoutMs: 4000 });
    const ids = ["held", ...Array.from({ length: 10 }, (_, i) => `free-${i}`)];
    for (const id of ids) await store.transaction(insert(id));
    const peer = await peerLocks("held");
    try {
      // First alone in the only group slot, then three more for it and ten unrelated at once.
      const lone = bump(store, "held");
      await new Promise((resolve) => setImmediate(resolve));
      const locked = Promise.allSettled([lone, ...[1, 2, 3].map(() => bump(store, "held"))]);
      const unrelated = await Promise.all(ids.slice(1).map((id) => bump(store, id)));
      // Well under the 4 s lock_timeout a caller waiting in the group would have held them.
      expect(Math.max(...unrelated)).toBeLessThan(1000);
      expect(store.groupCommitStats().retries["lock-busy"]).toBeGreaterThan(0);
      peer.release();
      await peer.done;
      const answers = await locked;
      expect(answers.map((a) => (a.status === "fulfilled" ? a.value < 4000 : a.reason))).toEqual([
        true,
        true,
        true,
        true,
      ]);
    } finally {
      peer.release();
      await peer.done;
    }
    expect((await store.getJob(key("held")))?.version).toBe(5);
    for (const id of ids.slice(1)) expect((await store.getJob(key(id)))?.version).toBe(2);
  });

  it("a caller whose row stays locked for lock_timeout is answered store-unavailable then, counted, its batch-mates committed", async () => {
    fresh();
    const store = await open({ groupCommitConcurrency: 1, lockTimeoutMs: 600 });
    for (const id of ["held", "free"]) await store.transaction(insert(id));
    const peer = await peerLocks("held");
    try {
      const started = performance.now();
      const results = await Promise.allSettled([
        bump(store, "held"),
        bump(store, "held"),
        bump(store, "free"),
      ]);
      expect(outcomes(results)).toEqual(["store-unavailable", "store-unavailable", "ok"]);
      expect(performance.now() - started).toBeGreaterThanOrEqual(600);
      expect(store.poolStats().lockTimeouts).toBe(2);
      expect(store.groupCommitStats().lockTimeouts).toBe(2);
    } finally {
      peer.release();
      await peer.done;
    }
    expect((await store.getJob(key("held")))?.version).toBe(1);
    expect((await store.getJob(key("free")))?.version).toBe(2);
  });
});
