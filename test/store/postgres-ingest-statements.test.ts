import { afterEach, describe, expect, it } from "vitest";
import { countingProxy } from "../../bench/lib/counting-proxy.js";
import type { Observation } from "../../src/core/model.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { EffectDefinition } from "../../src/engine/effect-definitions.js";
import type { ProviderPolicy } from "../../src/engine/finality.js";
import { createClient, NOT_LAST, type TxSql } from "../../src/store/postgres/postgres-client.js";
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
  async function counted(effects: EffectDefinition[] = [], providers?: Record<string, ProviderPolicy>) {
    schema = uniqueSchemaName();
    stores.push(await openPostgresStore({ url: POSTGRES_TEST_URL, schema }));
    const target = new URL(POSTGRES_TEST_URL);
    const proxy = await countingProxy({ host: target.hostname, port: Number(target.port || 5432) });
    // Migrated above, opened here without migrating: only ingest's statements are counted.
    const store = await openPostgresStore({ url: proxy.url(POSTGRES_TEST_URL), schema, migrate: false });
    stores.push(store);
    const engine = engineOf(
      createFinality({ store, effects, ...(providers === undefined ? {} : { providers }) }),
    );
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

  it("a new job: BEGIN, the whole ingest in one statement (finality_ingest) and COMMIT, in one round trip", async () => {
    const { ingest, close } = await counted();
    try {
      const { outcome, statements, roundTrips } = await ingest(webhook("job-1", "running", 1, "d-1"));
      expect(outcome).toMatchObject({ applied: true });
      // BEGIN, the ingest, the check that the database is in time (finality_before) and COMMIT
      // (no lock_timeout reset: a COMMIT takes no lock since settlements are numbered when read).
      expect(statements).toBe(4);
      // All in one write: the ingest writes only inside BEGIN's transaction, and carries its own checks.
      expect(roundTrips).toBe(1);
    } finally {
      await close();
    }
  });

  it("a known job: BEGIN, the ingest and COMMIT, in one round trip", async () => {
    const { ingest, close } = await counted();
    try {
      await ingest(webhook("job-1", "pending", 1, "d-1"));
      const { outcome, statements, roundTrips } = await ingest(webhook("job-1", "running", 2, "d-2"));
      expect(outcome).toMatchObject({ applied: true });
      expect(statements).toBe(4);
      expect(roundTrips).toBe(1);
    } finally {
      await close();
    }
  });

  it("a settling update with an effect: BEGIN, the ingest with its outbox row, and COMMIT, in one round trip", async () => {
    const { ingest, store, close } = await counted([{ name: "notify", handler: async () => {} }]);
    try {
      await ingest(webhook("job-1", "running", 1, "d-1"));
      const { outcome, statements, roundTrips } = await ingest(webhook("job-1", "succeeded", 2, "d-2"));
      expect(outcome).toMatchObject({ applied: true, settled: true, effects: ["notify"] });
      expect([statements, roundTrips]).toEqual([4, 1]);
      const [row] = await store.transaction((tx) => tx.execute("SELECT count(*)::int AS n FROM outbox", []));
      expect(row?.n).toBe(1);
    } finally {
      await close();
    }
  });

  it("a settling update that may fire a transactional effect: BEGIN with the load, the update, the outbox row with COMMIT", async () => {
    // A transactional effect runs in Node inside the transaction: the ordinary path.
    const { ingest, store, close } = await counted([
      { name: "in-tx", transactional: async () => {} },
      { name: "notify", handler: async () => {} },
    ]);
    try {
      await ingest(webhook("job-1", "running", 1, "d-1"));
      const { outcome, statements, roundTrips } = await ingest(webhook("job-1", "succeeded", 2, "d-2"));
      expect(outcome).toMatchObject({ applied: true, settled: true, effects: ["in-tx", "notify"] });
      // BEGIN, the load, the update, the outbox row, the check and COMMIT.
      expect(statements).toBe(6);
      // The outbox row goes when the update has answered (it may have found more to do), COMMIT
      // with it: 3 round trips, not 4.
      expect(roundTrips).toBe(3);
      const [row] = await store.transaction((tx) => tx.execute("SELECT count(*)::int AS n FROM outbox", []));
      expect(row?.n).toBe(1);
    } finally {
      await close();
    }
  });

  it("a redelivery: BEGIN, the ingest (its event, the job read again) and COMMIT, in one round trip", async () => {
    const { ingest, store, close } = await counted();
    try {
      await ingest(webhook("job-1", "running", 1, "d-1"));
      const { outcome, statements, roundTrips } = await ingest(webhook("job-1", "running", 1, "d-1"));
      expect(outcome).toMatchObject({ applied: false, reason: "duplicate-delivery" });
      expect(outcome.job?.state).toBe("running");
      // BEGIN, the ingest, the check and COMMIT.
      expect(statements).toBe(4);
      expect(roundTrips).toBe(1);
      const reasons = await store.transaction((tx) =>
        tx.execute("SELECT reason FROM events WHERE job_id = $1 ORDER BY event_no", ["job-1"]),
      );
      expect(reasons).toEqual([{ reason: null }, { reason: "duplicate-delivery" }]);
    } finally {
      await close();
    }
  });

  it("a group of 16 ingests: BEGIN, every ingest and COMMIT: one round trip", async () => {
    const { ingestAll, store, close } = await counted();
    try {
      const webhooks = Array.from({ length: 16 }, (_, i) => webhook(`job-${i}`, "running", 1, `d-${i}`));
      const { outcomes, statements, roundTrips } = await ingestAll(webhooks);
      expect(outcomes.every((outcome) => outcome.applied)).toBe(true);
      expect(store.groupCommitStats().largestBatch).toBe(16);
      // Each caller's ingest (16), BEGIN, the check and COMMIT: 19 statements, sent one after
      // another in one write.
      expect(statements).toBe(19);
      expect(roundTrips).toBe(1);
    } finally {
      await close();
    }
  });

  it("a group under registered-only, half its jobs unknown: those are parked in the same round trip, nobody runs again", async () => {
    const { ingestAll, store, close } = await counted([], { generic: { unknownJobs: "registered-only" } });
    try {
      const engine = engineOf(
        createFinality({ store, providers: { generic: { unknownJobs: "registered-only" } } }),
      );
      for (let i = 0; i < 8; i += 2) await engine.register({ provider: "generic", id: `job-${i}` });
      const webhooks = Array.from({ length: 8 }, (_, i) => webhook(`job-${i}`, "succeeded", 1, `d-${i}`));
      const { outcomes, roundTrips } = await ingestAll(webhooks);
      expect(outcomes.map((outcome) => outcome.reason)).toEqual([
        null,
        "parked",
        null,
        "parked",
        null,
        "parked",
        null,
        "parked",
      ]);
      expect(roundTrips).toBe(1);
      expect(store.groupCommitStats()).toMatchObject({ largestBatch: 8, retries: { "not-last": 0 } });
      expect(await rowCount(store, "SELECT count(*)::int AS n FROM parked", [])).toBe(4);
      // Registered now, each parked completion goes through the reducer and settles its job.
      const registered = await engine.register({ provider: "generic", id: "job-1" });
      expect(registered).toMatchObject({ parked: 1, job: { state: "succeeded" } });
    } finally {
      await close();
    }
  });

  it("registering a new job costs 2 round trips: BEGIN with its read, then its insert with the COMMIT; one with parked observations runs again the ordinary way", async () => {
    const { store, close } = await counted([], { generic: { unknownJobs: "registered-only" } });
    const target = new URL(POSTGRES_TEST_URL);
    const proxy = await countingProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const counting = await openPostgresStore({ url: proxy.url(POSTGRES_TEST_URL), schema, migrate: false });
    stores.push(counting);
    try {
      const engine = engineOf(
        createFinality({ store: counting, providers: { generic: { unknownJobs: "registered-only" } } }),
      );
      await counting.transaction(async (tx) => tx.getJob({ provider: "generic", id: "warm" }));
      proxy.start();
      const fresh = await engine.register({ provider: "generic", id: "job-new", kind: "render" });
      expect(proxy.stop()).toEqual({ statements: 5, roundTrips: 2 });
      expect(fresh).toMatchObject({ created: true, job: { state: "pending", kind: "render" } });
      // A completion parked before its job: the insert finds it, fails (FNL01), and the work runs
      // again with the COMMIT waiting, applying it.
      await engineOf(
        createFinality({ store, providers: { generic: { unknownJobs: "registered-only" } } }),
      ).ingestTrusted(webhook("job-parked", "succeeded", 1, "p-1"));
      const parked = await engine.register({ provider: "generic", id: "job-parked" });
      expect(parked).toMatchObject({ created: true, parked: 1, job: { state: "succeeded" } });
      expect(await rowCount(store, "SELECT count(*)::int AS n FROM parked", [])).toBe(0);
    } finally {
      await proxy.close();
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

  // The COMMIT goes out behind a webhook's write, before its answer (QueryOptions.last). An insert
  // that meets a tombstone or parked observations has more to do: the statement fails the
  // transaction (finality_expect), the COMMIT behind it answers ROLLBACK, and the ingest runs again
  // with the COMMIT waiting, answered as it always was.
  const tombstone = (store: PostgresStore, id: string) =>
    store.transaction((tx) =>
      tx.execute(
        "INSERT INTO tombstones (provider, id, state, settled_at, effects_hash) VALUES ('generic', $1, 'succeeded', now(), 'h')",
        [id],
      ),
    );
  const rowCount = async (store: PostgresStore, sql: string, values: unknown[]) => {
    const [row] = await store.transaction((tx) => tx.execute(sql, values));
    return row?.n;
  };

  it("a lone webhook for a pruned job: the ingest with COMMIT rolls back, runs again the ordinary way and answers the tombstone", async () => {
    const { ingest, store, close } = await counted();
    try {
      await tombstone(store, "job-p");
      const { outcome, statements, roundTrips } = await ingest(webhook("job-p", "running", 1, "d-p"));
      expect(outcome).toMatchObject({ applied: false, reason: "already-settled-pruned", job: null });
      // BEGIN+ingest+check+COMMIT (answering ROLLBACK); then BEGIN+load, insert, the event,
      // COMMIT.
      expect([statements, roundTrips]).toEqual([9, 5]);
      expect(await rowCount(store, "SELECT count(*)::int AS n FROM jobs WHERE id = $1", ["job-p"])).toBe(0);
      const reasons = await store.transaction((tx) =>
        tx.execute("SELECT reason FROM events WHERE job_id = $1 ORDER BY event_no", ["job-p"]),
      );
      expect(reasons).toEqual([{ reason: "already-settled-pruned" }]);
      // Its delivery is recorded once, by the run that committed: a retry is a duplicate.
      expect(
        await rowCount(store, "SELECT count(*)::int AS n FROM deliveries WHERE delivery_id = $1", ["d-p"]),
      ).toBe(1);
    } finally {
      await close();
    }
  });

  it("a group with a pruned job and a job with parked observations: the group runs again, each answered as alone", async () => {
    const { ingestAll, store, close } = await counted();
    try {
      await tombstone(store, "job-p");
      await store.transaction((tx) =>
        tx.parkObservation({ ...webhook("job-q", "succeeded", 2, "d-q0"), source: "webhook" }, T0),
      );
      const webhooks = [
        ...Array.from({ length: 6 }, (_, i) => webhook(`job-${i}`, "running", 1, `d-${i}`)),
        webhook("job-p", "running", 1, "d-p"),
        webhook("job-q", "running", 1, "d-q1"),
      ];
      const { outcomes } = await ingestAll(webhooks);
      expect(outcomes.map((outcome) => outcome.reason)).toEqual([
        ...Array(6).fill(null),
        "already-settled-pruned",
        null,
      ]);
      // The parked completion was applied in the transaction that created the job.
      expect(outcomes[7]?.job).toMatchObject({ id: "job-q", state: "succeeded" });
      const stats = store.groupCommitStats();
      expect(stats.largestBatch).toBe(8);
      expect(stats.retries["not-last"]).toBeGreaterThanOrEqual(1);
      expect(await rowCount(store, "SELECT count(*)::int AS n FROM jobs", [])).toBe(7);
      expect(await rowCount(store, "SELECT count(*)::int AS n FROM parked", [])).toBe(0);
      expect(await rowCount(store, "SELECT count(*)::int AS n FROM deliveries", [])).toBe(8);
    } finally {
      await close();
    }
  });

  it("a caller that fails before its last statement keeps the group's COMMIT from going ahead: nothing of it is stored", async () => {
    // An effect that may fire on a settling webhook keeps it on the ordinary path (the load, then
    // the write); limited to a kind these jobs lack, it fires nothing, so each write is a last one.
    const { ingestAll, store, close } = await counted([
      { name: "batch-only", kinds: ["batch"], handler: async () => {} },
    ]);
    try {
      // Half a surrogate pair: refused (invalid-request) after its load, before its insert is sent.
      const webhooks = [
        webhook("job-a", "succeeded", 1, "d-a"),
        webhook("job-\uD800", "succeeded", 1, "d-bad"),
        webhook("job-b", "succeeded", 1, "d-b"),
        webhook("job-c", "succeeded", 1, "d-c"),
      ];
      const settled = await Promise.allSettled(
        webhooks.map(async (obs) => (await ingestAll([obs])).outcomes[0]),
      );
      expect(settled.map((outcome) => outcome.status)).toEqual([
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
      ]);
      expect(store.groupCommitStats().largestBatch).toBe(4);
      // Had the COMMIT gone out behind the others' inserts, the refused one's delivery would be
      // stored: its sender's retry would be taken for a duplicate, its completion lost.
      expect(
        await rowCount(store, "SELECT count(*)::int AS n FROM deliveries WHERE delivery_id = $1", ["d-bad"]),
      ).toBe(0);
      expect(await rowCount(store, "SELECT count(*)::int AS n FROM jobs", [])).toBe(3);
    } finally {
      await close();
    }
  });

  /** A migrated schema and a one-connection client of its own, without the store's transactions. */
  async function onBareClient(work: (sql: ReturnType<typeof createClient>) => Promise<void>) {
    schema = uniqueSchemaName();
    stores.push(await openPostgresStore({ url: POSTGRES_TEST_URL, schema }));
    const sql = createClient({ url: POSTGRES_TEST_URL, schema, max: 1 });
    try {
      await work(sql);
    } finally {
      await sql.end();
    }
  }

  it("the load sent with BEGIN records nothing outside a transaction (were BEGIN to fail, it would run alone)", () =>
    onBareClient(async (sql) => {
      // Each statement on its own, committed as it runs: what the load meets after a failed BEGIN.
      const alone: TxSql = {
        unsafe: (text, values, options) => sql.unsafe(text, values, { prepare: options?.prepare ?? false }),
        savepoint: () => Promise.reject(new Error("not in a transaction")),
        commitsAhead: false,
      };
      const loaded = await createPostgresTx(alone).loadForIngest?.(
        { provider: "generic", id: "job-1" },
        "d-1",
        T0,
      );
      expect(loaded).toEqual({ duplicate: true, job: null });
      const [row] = await sql.unsafe<{ n: number }>("SELECT count(*)::int AS n FROM deliveries");
      expect(row?.n).toBe(0);
    }));

  it("a BEGIN that fails fails its transaction, though the load went out with it, and nothing is stored", () =>
    onBareClient(async (sql) => {
      // A mode the server refuses: a BEGIN that fails while its connection lives on.
      const outcome = sql.begin("isolation level nonsense", async (tx) =>
        createPostgresTx(tx).loadForIngest?.({ provider: "generic", id: "job-1" }, "d-1", T0),
      );
      await expect(outcome).rejects.toThrow(/syntax error/);
      const [row] = await sql.unsafe<{ n: number }>("SELECT count(*)::int AS n FROM deliveries");
      expect(row?.n).toBe(0);
    }));

  const plan = { now: T0, adopt: true, nextCheckAt: null, detail: null, effects: [] };
  const stored = async (sql: ReturnType<typeof createClient>) => {
    const [row] = await sql.unsafe<{ n: number }>(
      "SELECT (SELECT count(*) FROM deliveries) + (SELECT count(*) FROM jobs) + (SELECT count(*) FROM events) AS n",
    );
    return Number(row?.n);
  };

  it("the one-statement ingest writes nothing outside a transaction (were BEGIN to fail, it would run alone)", () =>
    onBareClient(async (sql) => {
      const alone: TxSql = {
        unsafe: (text, values, options) => sql.unsafe(text, values, { prepare: options?.prepare ?? false }),
        savepoint: () => Promise.reject(new Error("not in a transaction")),
        commitsAhead: true,
      };
      const ingest = createPostgresTx(alone).ingestAtOnce?.(webhook("job-1", "running", 1, "d-1"), plan);
      await expect(ingest).rejects.toMatchObject({ code: NOT_LAST });
      expect(await stored(sql)).toBe(0);
    }));

  it("a BEGIN that fails, the one-statement ingest and COMMIT behind it in one write: BEGIN's error, nothing stored", () =>
    onBareClient(async (sql) => {
      // The COMMIT, run outside any transaction, answers COMMIT: that must not read as committed.
      const outcome = sql.begin(
        "isolation level nonsense",
        async (tx) => createPostgresTx(tx).ingestAtOnce?.(webhook("job-1", "running", 1, "d-1"), plan),
        { together: true, worksLeft: () => 1 },
      );
      await expect(outcome).rejects.toThrow(/syntax error/);
      expect(await stored(sql)).toBe(0);
    }));
});
