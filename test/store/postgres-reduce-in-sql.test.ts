import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { Job, Observation, UnknownJobPolicy } from "../../src/core/model.js";
import { reduce } from "../../src/core/reducer.js";
import { CANONICAL_STATES } from "../../src/core/states.js";
import { effectsFor, newEffectRow } from "../../src/engine/effect-definitions.js";
import type { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { cases, NOW } from "../core/reducer.cases.js";
import { observationArb } from "../helpers/observations.js";
import { postgresSuite, useFreshSchema } from "../helpers/postgres.js";
import { makeJob, T0 } from "../helpers/records.js";

// A webhook's ingest on PostgreSQL runs the reducer's rule in SQL (migration 0014's
// finality_ingest, StoreTx.ingestAtOnce), so that BEGIN, it and COMMIT are one round trip. Two
// copies of the one merge point must agree: each stored job and observation drawn here goes
// through both, and the job written, the answer and the event must be what `reduce` says.
const { admin } = await postgresSuite("PostgreSQL reducer in SQL");

const CANDIDATES = [
  { name: "any-kind", kinds: null },
  { name: "batch-only", kinds: ["batch"] },
  { name: "batch-or-response", kinds: ["response", "batch"] },
];
const json = fc.constantFrom<unknown>(null, { a: 1 }, [1, "x"], "text", 0, { nested: { b: [true] } });
const storedJobArb: fc.Arbitrary<Job> = fc
  .record({
    state: fc.constantFrom(...CANONICAL_STATES),
    version: fc.integer({ min: 1, max: 9 }),
    maxSeq: fc.option(fc.integer({ min: 0, max: 6 }), { nil: null }),
    maxUpdateTime: fc.option(
      fc.integer({ min: 0, max: 6 }).map((n) => 1_000 * n),
      { nil: null },
    ),
    kind: fc.option(fc.constantFrom("batch", "response"), { nil: null }),
    conflict: fc.boolean(),
    stuck: fc.boolean(),
    registered: fc.boolean(),
    pollAttempts: fc.integer({ min: 0, max: 3 }),
    lastPollError: fc.option(
      fc.constant({ at: T0, message: "timed out", url: null, code: "ETIMEDOUT", status: null }),
      {
        nil: null,
      },
    ),
    metadata: json,
    result: json,
    error: json,
  })
  .map((fields) => makeJob({ id: "drawn", ...fields }));
const observedArb: fc.Arbitrary<Observation> = fc
  .tuple(
    observationArb,
    fc.record(
      {
        kind: fc.constantFrom("batch", "response"),
        rawState: fc.constantFrom("IN_PROGRESS", "done"),
        result: json,
        error: json,
      },
      { requiredKeys: [] },
    ),
  )
  .map(([observation, extra]) => ({ ...observation, ...extra }));

describe("PostgreSQL: the reducer in SQL (finality_ingest) agrees with reduce", () => {
  const fresh = useFreshSchema(admin);
  let drawn = 0;

  /**
   * `stored` (absent: null) meets `observation` through the store's one-statement ingest; the
   * answer, the job stored and the event appended are checked against `reduce`.
   */
  async function agrees(
    store: PostgresStore,
    stored: Job | null,
    observation: Observation,
    policy: UnknownJobPolicy,
  ): Promise<void> {
    const id = `job-${++drawn}`;
    const job = stored === null ? null : { ...stored, id };
    const obs = { ...observation, id };
    if (job !== null) await store.transaction((tx) => tx.insertJob(job));
    const now = NOW + drawn;
    const nextCheckAt = now + 30_000;
    // Every effect a settling may enqueue, each with its kinds filter (null: any kind).
    const effects = CANDIDATES.map(({ name, kinds }) => ({
      row: newEffectRow(obs, name, obs.state, `${id}-${name}`, now, "00-trace-01"),
      kinds,
    }));
    // Every other draw asks for no job in the answer (a run's mirror): the same writes, job null.
    const withoutJob = drawn % 2 === 0;
    const answer = await store.transaction(async (tx) =>
      // Refused (NOT_LAST), the work runs again the ordinary way, where there is no ingestAtOnce.
      tx.ingestAtOnce === undefined
        ? "refused"
        : tx.ingestAtOnce(obs, {
            now,
            adopt: policy === "adopt",
            nextCheckAt,
            detail: { drawn },
            effects,
            ...(withoutJob ? { withoutJob } : {}),
          }),
    );
    const expected = reduce(job, obs, { now, unknownJobs: policy });
    if (!expected.applied && expected.reason === "unknown-state") {
      // Recorded the ordinary way (ingest sends no unknown state here): nothing written.
      expect(answer).toBe("refused");
      expect(await store.getJob(obs)).toEqual(job);
      expect(await store.jobEvents(obs)).toEqual([]);
      return;
    }
    if (!expected.applied && expected.reason === "unregistered") {
      // Parked, as ingest parks it: the observation kept whole, an event that says so.
      expect(answer).toEqual({ applied: false, reason: "parked", job: null, effects: [] });
      expect(await store.getJob(obs)).toBeNull();
      const parked = await store.listParked({ provider: obs.provider, id, limit: 10 });
      expect(parked.items.map(({ parkedNo: _, ...row }) => row)).toEqual([
        { provider: obs.provider, id, deliveryId: null, parkedAt: now, observation: obs },
      ]);
      const [event] = await store.jobEvents(obs);
      expect(event).toMatchObject({ applied: false, reason: "parked", detail: { drawn }, at: now });
      return;
    }
    let after = expected.next ?? job;
    if (job === null && after !== null && after.settledAt === null) after = { ...after, nextCheckAt };
    const reason = expected.applied ? null : expected.reason;
    // The first terminal state enqueues what effectsFor picks for the job as written.
    const fired =
      expected.applied && expected.settled && after !== null
        ? effectsFor(
            CANDIDATES.map(({ name, kinds }) => ({ name, ...(kinds === null ? {} : { kinds }) })),
            after,
            obs.state,
          ).map((definition) => definition.name)
        : [];
    expect(answer).toEqual({
      applied: expected.applied,
      reason,
      job: withoutJob ? null : after,
      effects: fired,
    });
    expect(await store.getJob(obs)).toEqual(after);
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    const outbox = await store.listEffects({ jobId: id, limit: 10 });
    expect(outbox.items.sort(byName)).toEqual(
      effects
        .map((effect) => effect.row)
        .filter((row) => fired.includes(row.name))
        .sort(byName),
    );
    const events = await store.jobEvents(obs);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      applied: expected.applied,
      reason,
      state: obs.state,
      source: obs.source,
      rawState: obs.rawState ?? null,
      deliveryId: null,
      at: now,
      detail: { drawn },
    });
  }

  it("on the reducer's seed cases", async () => {
    const store = await fresh.open();
    for (const c of cases) await agrees(store, c.job, c.obs, c.policy ?? "adopt");
  });

  it("on drawn jobs (or none) and observations, under both unknown-job policies", async () => {
    const store = await fresh.open();
    await fc.assert(
      fc.asyncProperty(
        fc.option(storedJobArb, { nil: null, freq: 4 }),
        observedArb,
        fc.constantFrom<UnknownJobPolicy>("adopt", "registered-only"),
        (stored, observation, policy) => agrees(store, stored, observation, policy),
      ),
      { numRuns: 300 },
    );
  });

  describe("what it leaves to the ordinary path, and a redelivery", () => {
    let store: PostgresStore;
    beforeAll(() => {
      drawn = 10_000;
    });
    const webhook = (id: string, state: string, extra: Partial<Observation> = {}): Observation => ({
      provider: "generic",
      id,
      state,
      source: "webhook",
      ...extra,
    });
    const atOnce = (obs: Observation, now = NOW) =>
      store.transaction(async (tx) =>
        tx.ingestAtOnce === undefined
          ? "refused"
          : tx.ingestAtOnce(obs, { now, adopt: true, nextCheckAt: null, detail: null, effects: [] }),
      );

    it("answers a redelivery with the job as the first delivery left it", async () => {
      store = await fresh.open();
      const first = await atOnce(webhook("r", "running", { deliveryId: "d-1", seq: 1 }));
      expect(first).toMatchObject({ applied: true, reason: null, job: { state: "running", version: 1 } });
      const again = await atOnce(webhook("r", "succeeded", { deliveryId: "d-1", seq: 2 }), NOW + 1);
      expect(again).toMatchObject({
        applied: false,
        reason: "duplicate-delivery",
        job: { state: "running" },
      });
      const events = await store.jobEvents({ provider: "generic", id: "r" });
      expect(events.map((e) => e.reason)).toEqual([null, "duplicate-delivery"]);
    });

    it("refuses a job with a tombstone, or with parked observations, writing nothing", async () => {
      store = await fresh.open();
      await admin.unsafe(
        `INSERT INTO "${fresh.schema()}".tombstones (provider, id, state, settled_at, effects_hash)
          VALUES ('generic', 'pruned', 'succeeded', now(), 'h')`,
      );
      expect(await atOnce(webhook("pruned", "running", { deliveryId: "d-p" }))).toBe("refused");
      expect(await store.hasDelivery("generic", "d-p")).toBe(false);
      await store.transaction((tx) => tx.parkObservation(webhook("parked", "succeeded"), NOW));
      expect(await atOnce(webhook("parked", "running", { deliveryId: "d-q" }))).toBe("refused");
      expect(await store.getJob({ provider: "generic", id: "parked" })).toBeNull();
      expect(await store.hasDelivery("generic", "d-q")).toBe(false);
    });

    it("refuses a state that is not canonical", async () => {
      store = await fresh.open();
      expect(await atOnce(webhook("odd", "weird"))).toBe("refused");
      expect(await store.getJob({ provider: "generic", id: "odd" })).toBeNull();
    });
  });
});
