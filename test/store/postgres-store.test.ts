import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { isFinalityError } from "../../src/core/errors.js";
import type { Observation } from "../../src/core/model.js";
import { isTerminal } from "../../src/core/states.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createPostgresStore, openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { engineOf } from "../helpers/engine.js";
import { POSTGRES_TEST_URL, postgresSuite, useFreshSchema } from "../helpers/postgres.js";
import { makeEffect, makeJob, T0 } from "../helpers/records.js";
import { tempDir } from "../helpers/temp-dir.js";

// What only PostgreSQL has: several replicas on one database, real connection failures, SQL types.
const { admin } = await postgresSuite("PostgreSQL store");

describe("PostgreSQL store", () => {
  const fresh = useFreshSchema(admin);
  const open = fresh.open;

  it("claims effects in claim order: due pending ones earliest first, then expired leases earliest first", async () => {
    // PostgreSQL's RETURNING has no order, so the store sorts by the claim's branch and due time
    // (SQLite promises no order). Inserted out of order: neither row number nor insert order answers.
    const store = await open();
    const pending = [3, 1, 2].map((i) => makeEffect({ jobId: `job-p${i}`, nextAttemptAt: T0 - 10 + i }));
    const expired = [2, 1].map((i) =>
      makeEffect({
        jobId: `job-e${i}`,
        status: "delivering",
        leaseUntil: T0 - 100 + i,
        nextAttemptAt: T0 - 50,
      }),
    );
    await store.transaction(async (tx) => {
      for (const effect of [...expired, ...pending]) await tx.enqueueEffect(effect);
    });
    const claimed = await store.claimEffects(T0, 10, 30_000);
    expect(claimed.map((e) => e.jobId)).toEqual(["job-p1", "job-p2", "job-p3", "job-e1", "job-e2"]);
    expect(claimed[0]).toEqual({ ...pending[1], status: "delivering", attempts: 1, leaseUntil: T0 + 30_000 });
  });

  it("replicas ingesting the same jobs at once: one settlement and one effect per job", async () => {
    const effects = [{ name: "notify", handler: async () => {} }];
    const replicas = [
      engineOf(createFinality({ store: await open(), effects })),
      engineOf(createFinality({ store: await open(), effects })),
    ];
    const jobs = Array.from({ length: 20 }, (_, i) => `job-${i}`);
    const observations: Observation[] = jobs.flatMap((id, j) =>
      ["pending", "running", "running", j % 2 ? "succeeded" : "failed", "succeeded", "failed"].map(
        (state, k) => ({
          provider: "generic",
          id,
          state,
          source: "webhook" as const,
          seq: k,
          // Every other observation is sent twice, to both replicas: a redelivery.
          deliveryId: `${id}-${k % 4}`,
        }),
      ),
    );
    const outcomes = await Promise.all(
      observations.flatMap((obs, i) => [
        replicas[i % 2]!.ingestTrusted(obs),
        replicas[(i + 1) % 2]!.ingestTrusted(obs),
      ]),
    );
    const store = replicas[0]!.store;
    for (const id of jobs) {
      const job = await store.getJob({ provider: "generic", id });
      expect(isTerminal(job!.state)).toBe(true);
      const mine = outcomes.filter((o) => o.job?.id === id);
      expect(mine.filter((o) => o.settled)).toHaveLength(1);
      expect(mine.filter((o) => o.reason === "duplicate-delivery")).toHaveLength(8);
      expect((await store.listEffects({ jobId: id })).items).toHaveLength(1);
      expect(await store.jobEvents({ provider: "generic", id })).toHaveLength(12);
    }
  });

  it("replicas claiming due jobs and effects at once never take the same row twice", async () => {
    const [a, b] = [await open(), await open()];
    await a.transaction(async (tx) => {
      for (let i = 0; i < 60; i++) await tx.insertJob(makeJob({ id: `due-${i}`, nextCheckAt: T0 + i }));
    });
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).claimDueJobs(T0 + 1_000, 10, T0 + 60_000)),
    );
    const claimed = claims.flat().map((job) => job.id);
    expect(claimed).toHaveLength(60);
    expect(new Set(claimed).size).toBe(60);
  });

  it("keeps times as timestamptz and JSON as jsonb, converting at the edge only", async () => {
    const store = await open();
    await store.transaction((tx) => tx.insertJob(makeJob({ id: "typed", metadata: { a: [1, "x"] } })));
    const [row] = await admin.unsafe(
      `SELECT pg_typeof(submitted_at)::text AS time_type, pg_typeof(metadata)::text AS json_type,
              submitted_at = to_timestamp(${T0} / 1000.0) AS same_instant, metadata -> 'a' ->> 1 AS x
       FROM "${fresh.schema()}".jobs WHERE id = 'typed'`,
    );
    expect(row).toEqual({
      time_type: "timestamp with time zone",
      json_type: "jsonb",
      same_instant: true,
      x: "x",
    });
    expect((await store.getJob({ provider: "generic", id: "typed" }))?.submittedAt).toBe(T0);
    // The provider's ordering key is compared by the reducer: kept exactly, fractions included.
    const ordering = makeJob({ id: "ordering", maxUpdateTime: 1_767_225_600_123.456 });
    await store.transaction((tx) => tx.insertJob(ordering));
    expect(await store.getJob(ordering)).toEqual(ordering);
  });

  it("a transactional effect's SQL commits with the ingest, or not at all", async () => {
    const store = await open();
    await admin.unsafe(`CREATE TABLE "${fresh.schema()}".published (job_id text PRIMARY KEY)`);
    let refuse = true;
    const finality = createFinality({
      store,
      effects: [
        {
          name: "publish",
          transactional: async (job, tx) => {
            await tx.execute("INSERT INTO published (job_id) VALUES ($1)", [job.id]);
            if (refuse) throw new Error("refused");
          },
        },
      ],
    });
    const done = { provider: "generic", id: "t-1", state: "succeeded", source: "webhook" as const };
    await expect(engineOf(finality).ingestTrusted(done)).rejects.toThrow("refused");
    expect(await store.getJob(done)).toBeNull();
    refuse = false;
    expect((await engineOf(finality).ingestTrusted(done)).effects).toEqual(["publish"]);
    const rows = await store.transaction((tx) => tx.execute("SELECT count(*) AS n FROM published"));
    expect(rows).toEqual([{ n: 1 }]);
  });

  // row_counts is SQLite's alone: counts kept by triggers there (stats() must not scan on the
  // event loop); on PostgreSQL one counter row per state would serialise every replica's writes.
  // sqlite_sequence: SQLite's own bookkeeping of AUTOINCREMENT (the settlement feed's numbers).
  const SQLITE_ONLY_TABLES = ["row_counts", "sqlite_sequence"];

  it("has the same logical schema as SQLite: every table and column, by name", async () => {
    await open();
    const dir = tempDir();
    try {
      await createSqliteStore({ path: dir.file("ledger.db") }).close();
      const db = new Database(dir.file("ledger.db"), { readonly: true });
      const sqliteTables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .all()
        .filter((t) => !SQLITE_ONLY_TABLES.includes((t as { name: string }).name)) as { name: string }[];
      const sqlite = Object.fromEntries(
        sqliteTables.map(({ name }) => [
          name,
          (db.prepare(`PRAGMA table_info(${name})`).all() as { name: string }[]).map((c) => c.name).sort(),
        ]),
      );
      db.close();
      const columns = await admin.unsafe<{ table_name: string; column_name: string }>(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1",
        [fresh.schema()],
      );
      const tables = [...new Set(columns.map((c) => c.table_name))];
      const postgres = Object.fromEntries(
        tables.map((t) => [
          t,
          columns
            .filter((c) => c.table_name === t)
            .map((c) => c.column_name)
            .sort(),
        ]),
      );
      expect(postgres).toEqual(sqlite);
    } finally {
      dir.cleanup();
    }
  });

  it("stores text jsonb cannot hold (NUL, half a surrogate pair) with U+FFFD in its place", async () => {
    const store = await open();
    const job = makeJob({
      id: "nul",
      state: "succeeded",
      result: { out: "a\u0000b", "k\u0000": "\ud800x" },
    });
    expect(await store.transaction((tx) => tx.insertJob(job))).toBe(true);
    expect((await store.getJob(job))?.result).toEqual({ out: "a\ufffdb", "k\ufffd": "\ufffdx" });
  });

  /** Resolves once `gate` is opened; for holding a transaction open while another store acts. */
  const gate = () => {
    let open = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { open, opened };
  };

  it("a retry holding an effect keeps a dispatcher on another replica from claiming it meanwhile", async () => {
    const [a, b] = [await open(), await open()];
    await a.transaction(async (tx) => {
      await tx.insertJob(makeJob({ id: "j", state: "succeeded" }));
      await tx.enqueueEffect(makeEffect({ jobId: "j", id: "e1", nextAttemptAt: T0 }));
    });
    const held = gate();
    const locked = gate();
    const retry = a.transaction(async (tx) => {
      const effect = await tx.getEffect("e1");
      locked.open();
      await held.opened;
      if (effect) await tx.updateEffect({ ...effect, attempts: 0 });
    });
    // The retry has read (and so locked) the row: the claim must pass it by.
    await locked.opened;
    expect(await b.claimEffects(T0 + 1, 10, 60_000)).toEqual([]);
    held.open();
    await retry;
    expect((await b.claimEffects(T0 + 1, 10, 60_000)).map((e) => e.id)).toEqual(["e1"]);
  });

  it("retention skips a settled job another transaction holds, instead of waiting to delete it", async () => {
    const [a, b] = [await open(), await open()];
    await a.transaction((tx) =>
      tx.insertJob(makeJob({ id: "old", state: "succeeded", settledAt: T0 - 1_000 })),
    );
    const pruned = await a.transaction(async (tx) => {
      await tx.getJob({ provider: "generic", id: "old" });
      // Inside the holder's transaction: waiting here would never end.
      return b.prune("settledJobs", T0, 10);
    });
    expect(pruned).toBe(0);
    expect(await b.prune("settledJobs", T0, 10)).toBe(1);
  }, 20_000);

  it("an ingest that waited on a job a prune deleted meanwhile finds the prune's tombstone: the job stays gone", async () => {
    // Ingest reads the job (locked) and the delivery in one statement; the tombstone must be read
    // by a later one, since the statement's snapshot predates the prune's commit it waited for.
    // Without group commit, so that the ingest waits for the row to the end (a group's caller
    // gives up after a short lock wait and runs again later, from a fresh start).
    const a = await open();
    const b = await openPostgresStore({
      url: POSTGRES_TEST_URL,
      schema: fresh.schema(),
      groupCommitMaxBatch: 1,
    });
    await a.transaction((tx) =>
      tx.insertJob(makeJob({ id: "old", state: "succeeded", settledAt: T0 - 1_000 })),
    );
    const finality = engineOf(createFinality({ store: b }));
    const locked = gate();
    const held = gate();
    const prune = a.transaction(async (tx) => {
      await tx.getJob({ provider: "generic", id: "old" });
      locked.open();
      await held.opened;
      await tx.execute(
        "INSERT INTO tombstones (provider, id, state, settled_at, effects_hash) VALUES ('generic', 'old', 'succeeded', $1, '')",
        [new Date(T0 - 1_000)],
      );
      await tx.execute("DELETE FROM jobs WHERE provider = 'generic' AND id = 'old'");
    });
    await locked.opened;
    const late = finality.ingestTrusted({
      provider: "generic",
      id: "old",
      state: "succeeded",
      source: "webhook",
      deliveryId: "late-redelivery",
    });
    // Until the ingest's statement waits for the prune's row lock.
    for (;;) {
      const [waiting] = await admin.unsafe<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND (query LIKE '%FOR UPDATE%' OR query LIKE '%finality_ingest(%')",
      );
      if ((waiting?.n ?? 0) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    held.open();
    await prune;
    expect((await late).reason).toBe("already-settled-pruned");
    expect(await b.getJob({ provider: "generic", id: "old" })).toBeNull();
    await b.close();
  }, 20_000);

  it("a webhook for a job registered while it waited for the job key's lock is applied, not parked (registered-only)", async () => {
    // The one-statement ingest reads no job, then parks on the job key's lock (as parkObservation
    // does); a registration that held that lock and commits meanwhile must be seen after it.
    // Without group commit, so that the ingest waits for the lock to the end.
    const a = await open();
    const b = await openPostgresStore({
      url: POSTGRES_TEST_URL,
      schema: fresh.schema(),
      groupCommitMaxBatch: 1,
    });
    const finality = engineOf(
      createFinality({ store: b, providers: { generic: { unknownJobs: "registered-only" } } }),
    );
    const locked = gate();
    const held = gate();
    const registration = a.transaction(async (tx) => {
      await tx.execute("SELECT pg_advisory_xact_lock(hashtextextended('generic/late', 0))");
      locked.open();
      await held.opened;
      await tx.insertJob(makeJob({ id: "late", state: "running" }));
    });
    await locked.opened;
    const late = finality.ingestTrusted({
      provider: "generic",
      id: "late",
      state: "succeeded",
      source: "webhook",
      deliveryId: "late-1",
    });
    // Until the ingest's statement waits for the registration's lock.
    for (;;) {
      const [waiting] = await admin.unsafe<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%finality_ingest(%'",
      );
      if ((waiting?.n ?? 0) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    held.open();
    await registration;
    expect(await late).toMatchObject({ applied: true, job: { state: "succeeded" } });
    expect((await b.listParked({ limit: 10 })).items).toEqual([]);
    await b.close();
  }, 20_000);

  it("stats count by state and status", async () => {
    const store = await open();
    await store.transaction(async (tx) => {
      await tx.insertJob(makeJob({ id: "p", nextCheckAt: 0 }));
      await tx.insertJob(makeJob({ id: "s", state: "succeeded", stuck: false, conflict: true }));
    });
    expect(await store.stats(T0)).toEqual({
      jobsByState: { pending: 1, succeeded: 1 },
      openJobs: 1,
      stuckJobs: 0,
      conflictJobs: 1,
      effectsByStatus: {},
      oldestOpenSubmittedAt: T0,
      dueJobs: 1,
    });
  });
});

describe("PostgreSQL store without a database", () => {
  // Port 1 on this machine: refused at once, nothing listens there.
  const nowhere = "postgres://postgres@127.0.0.1:1/test";

  it("reports store-unavailable (retryable), never a raw driver error, and is not ready", async () => {
    const store = createPostgresStore({ url: nowhere, connectTimeoutSeconds: 2 });
    const error = await store.getJob({ provider: "generic", id: "x" }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isFinalityError(error, "store-unavailable")).toBe(true);
    expect(error).toMatchObject({ retryable: true });
    const inTx = await store
      .transaction(async () => 1)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isFinalityError(inTx, "store-unavailable")).toBe(true);
    expect(await store.ready()).toBe(false);
    await store.close();
    await expect(openPostgresStore({ url: nowhere, connectTimeoutSeconds: 2 })).rejects.toMatchObject({
      code: "store-unavailable",
    });
  });

  it("refuses a schema name that is not a plain identifier", () => {
    expect(() => createPostgresStore({ url: nowhere, schema: 'x"; DROP TABLE jobs; --' })).toThrow(
      expect.objectContaining({ code: "invalid-config" }),
    );
  });
});
