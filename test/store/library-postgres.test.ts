import { describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/exports/postgres.js";
import {
  createDispatcher,
  createRunService,
  DEFAULT_RETENTION,
  finalityOn,
  manualClock,
  pruneOnce,
} from "../../src/index.js";
import { engineOf } from "../helpers/engine.js";
import { dropSchema, POSTGRES_TEST_URL, postgresSuite, uniqueSchemaName } from "../helpers/postgres.js";
import { T0 } from "../helpers/records.js";

// What a library user does with PostgreSQL, through the package's own entry points only
// (`finality` and `finality/postgres`: no SQLite driver on the way).
const { admin } = await postgresSuite("the library on PostgreSQL");

describe("the finality library on PostgreSQL", () => {
  it("claims and heartbeats runs with a lease of a fraction of a millisecond over whole seconds", async () => {
    const schema = uniqueSchemaName();
    const finality = finalityOn({
      store: await openPostgresStore({ url: POSTGRES_TEST_URL, schema, max: 2 }),
    });
    try {
      const runs = createRunService({ finality, defaultLeaseSeconds: 1.0005 });
      await runs.enqueue({ kind: "render" });
      await runs.enqueue({ kind: "render" });
      const first = await runs.claim({ workerId: "w1", leaseSeconds: 2.0004 });
      expect(first?.attempt.leaseMs).toBe(2_000);
      const second = await runs.claim({ workerId: "w2" });
      expect(second?.attempt.leaseMs).toBe(1_001);
      const beat = await runs.heartbeat(second?.attempt.id as string, {
        generation: second?.attempt.generation as number,
        leaseSeconds: 3.0007,
      });
      expect(beat).toBeTruthy();
    } finally {
      await finality.close();
      await dropSchema(admin, schema);
    }
  });

  it("ingests, delivers an effect once and prunes past the retention window", async () => {
    const schema = uniqueSchemaName();
    const clock = manualClock(T0);
    const delivered: string[] = [];
    const finality = finalityOn({
      store: await openPostgresStore({ url: POSTGRES_TEST_URL, schema, max: 2 }),
      clock,
      effects: [
        { name: "publish", on: ["succeeded"], handler: async (d) => void delivered.push(d.idempotencyKey) },
      ],
    });
    try {
      await finality.register({ provider: "acme", id: "job-1" });
      await finality.ingest({
        provider: "acme",
        id: "job-1",
        state: "succeeded",
        source: "webhook",
        deliveryId: "d1",
      });
      await finality.ingest({
        provider: "acme",
        id: "job-1",
        state: "running",
        source: "webhook",
        deliveryId: "d0",
      });
      expect((await finality.getJob({ provider: "acme", id: "job-1" }))?.state).toBe("succeeded");
      expect(await createDispatcher(finality).runOnce()).toBe(1);
      expect(delivered).toHaveLength(1);

      clock.advance((DEFAULT_RETENTION.settledJobsDays + 1) * 86_400_000);
      const counts = await pruneOnce(engineOf(finality).store, DEFAULT_RETENTION, clock.now());
      expect(counts).toMatchObject({ settledJobs: 1, deliveredEffects: 1, deliveries: 2 });
      expect(await finality.getJob({ provider: "acme", id: "job-1" })).toBeNull();
    } finally {
      await finality.close();
      await dropSchema(admin, schema);
    }
  });
});
