import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher } from "../../src/engine/dispatcher.js";
import type { Finality } from "../../src/engine/finality.js";
import { DEFAULT_RETENTION, pruneOnce } from "../../src/engine/retention.js";
import { createRunService } from "../../src/runs/run-service.js";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { engineOf } from "../helpers/engine.js";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  requirePostgres,
  uniqueSchemaName,
} from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp-dir.js";

const DAY = 86_400_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const stores: [string, () => Promise<Store>][] = [
  [
    "sqlite",
    async () => {
      const dir = tempDir();
      cleanups.push(() => dir.cleanup());
      return createSqliteStore({ path: dir.file("ledger.db") });
    },
  ],
  // Always registered: without PostgreSQL these fail (requirePostgres), they do not vanish.
  [
    "postgres",
    async () => {
      await requirePostgres("retention on PostgreSQL");
      const schema = uniqueSchemaName("finality_retention");
      const sql = adminClient();
      cleanups.push(async () => {
        await dropSchema(sql, schema);
        await sql.end();
      });
      return createPostgresStore({ url: POSTGRES_TEST_URL, schema });
    },
  ],
];

describe.each(stores)("retention on %s", (_name, openStore) => {
  async function ledger() {
    const clock = manualClock(Date.UTC(2026, 0, 1));
    let failing = new Set<string>();
    const finality = createFinality({
      store: await openStore(),
      clock,
      effects: [
        {
          name: "notify",
          handler: async (d) => {
            if (failing.has(d.job.id)) throw new Error("receiver refuses");
          },
        },
      ],
    });
    cleanups.push(() => finality.close());
    const dispatcher = createDispatcher(finality, { retry: { maxAttempts: 1 } });
    const settle = async (id: string, deliveryId: string) => {
      await finality.ingest({ provider: "acme", id, state: "succeeded", source: "webhook", deliveryId });
      await dispatcher.runOnce();
    };
    return { finality, clock, settle, fail: (ids: string[]) => (failing = new Set(ids)) };
  }

  async function snapshot(finality: Finality) {
    const jobs = (await finality.listJobs({ limit: 500 })).items.map((j) => j.id).sort();
    const effects = (await engineOf(finality).store.listEffects({ limit: 500 })).items
      .map((e) => `${e.jobId}:${e.status}`)
      .sort();
    return { jobs, effects };
  }

  it("after the windows pass, removes exactly the expired rows and nothing open, pending or dead", async () => {
    const { finality, clock, settle, fail } = await ledger();
    const t0 = clock.now();
    await settle("a-delivered", "d-a");
    fail(["b-dead"]);
    await settle("b-dead", "d-b");
    fail([]);
    await finality.register({ provider: "acme", id: "c-open" });
    await finality.ingest({
      provider: "acme",
      id: "c-open",
      state: "running",
      source: "webhook",
      deliveryId: "d-c",
    });
    clock.set(t0 + 10 * DAY);
    await settle("d-recent", "d-d");
    clock.set(t0 + 15 * DAY);

    const dry = await pruneOnce(engineOf(finality).store, DEFAULT_RETENTION, clock.now(), { dryRun: true });
    expect(dry).toEqual({
      deliveries: 3,
      events: 4,
      settledJobs: 1,
      deliveredEffects: 1,
      settledRuns: 0,
      tombstones: 0,
      parked: 0,
      // The feed rows of a-delivered and b-dead (settled 15 days ago): the feed has its own window.
      settlements: 2,
    });
    const before = await snapshot(finality);
    expect(before.jobs).toEqual(["a-delivered", "b-dead", "c-open", "d-recent"]);

    const counts = await pruneOnce(engineOf(finality).store, DEFAULT_RETENTION, clock.now(), {
      batchSize: 2,
    });
    expect(counts).toEqual(dry);
    const after = await snapshot(finality);
    expect(after.jobs).toEqual(["b-dead", "c-open", "d-recent"]);
    expect(after.effects).toEqual(["b-dead:dead", "d-recent:delivered"]);
    // The pruned job left its tombstone: its late webhook is answered, not applied again.
    expect(
      await engineOf(finality).store.getTombstone({ provider: "acme", id: "a-delivered" }),
    ).toMatchObject({
      state: "succeeded",
      settledAt: t0,
    });
    const late = await finality.ingest({
      provider: "acme",
      id: "a-delivered",
      state: "succeeded",
      source: "webhook",
      deliveryId: "d-a",
    });
    expect(late).toMatchObject({ applied: false, reason: "already-settled-pruned", effects: [] });
    expect((await snapshot(finality)).jobs).toEqual(["b-dead", "c-open", "d-recent"]);
    expect(await finality.jobEvents({ provider: "acme", id: "c-open" })).toEqual([]);
    expect((await finality.jobEvents({ provider: "acme", id: "d-recent" })).length).toBe(1);
    expect((await finality.getJob({ provider: "acme", id: "c-open" }))?.state).toBe("running");

    // A delivery id inside its window still deduplicates a redelivery.
    const again = await finality.ingest({
      provider: "acme",
      id: "d-recent",
      state: "failed",
      source: "webhook",
      deliveryId: "d-d",
    });
    expect(again.reason).toBe("duplicate-delivery");
    // A second pass at the same time finds nothing more.
    expect(
      Object.values(await pruneOnce(engineOf(finality).store, DEFAULT_RETENTION, clock.now())).every(
        (n) => n === 0,
      ),
    ).toBe(true);
    const stats = await engineOf(finality).store.housekeepingStats();
    expect(stats.oldest.deliveries).toBe(t0 + 10 * DAY);
    expect(stats.sizeBytes).toBeGreaterThan(0);
  });

  it("prunes settled runs with their attempts and events, never a queued one", async () => {
    const { finality, clock } = await ledger();
    const runs = createRunService({ finality });
    const t0 = clock.now();
    const done = (await runs.enqueue({ kind: "render" })).run;
    const claimed = await runs.claim({ workerId: "w1", kinds: ["render"], waitSeconds: 0 });
    if (claimed === null) throw new Error("nothing claimed");
    const { generation } = claimed.attempt;
    await runs.recordEvent(claimed.attempt.id, { generation, sequence: 1, type: "started" });
    await runs.recordEvent(claimed.attempt.id, {
      generation,
      sequence: 2,
      type: "succeeded",
      output: { ok: true },
    });
    expect((await runs.getRun(done.id))?.run.status).toBe("succeeded");
    const waiting = (await runs.enqueue({ kind: "other" })).run;
    clock.set(t0 + 15 * DAY);

    const counts = await pruneOnce(engineOf(finality).store, DEFAULT_RETENTION, clock.now());
    runs.close();
    expect(counts.settledRuns).toBe(1);
    expect(await runs.getRun(done.id)).toBeNull();
    expect(await runs.runEvents(done.id)).toEqual([]);
    expect((await runs.getRun(waiting.id))?.run.status).toBe("queued");
  });
});
