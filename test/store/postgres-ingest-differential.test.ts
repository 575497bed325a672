import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import type { JobEvent, Observation, UnknownJobPolicy } from "../../src/core/model.js";
import { CANONICAL_STATES } from "../../src/core/states.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { EffectDefinition } from "../../src/engine/effect-definitions.js";
import type { ProviderPolicy } from "../../src/engine/finality.js";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { engineOf } from "../helpers/engine.js";
import { dropSchema, POSTGRES_TEST_URL, postgresSuite, uniqueSchemaName } from "../helpers/postgres.js";
import { T0 } from "../helpers/records.js";

// On PostgreSQL a webhook that fires no effect takes its own path: one statement, the reducer's
// rule in SQL (StoreTx.ingestAtOnce). What reaches it from the engine (the unknown-job policy,
// the first check from the provider's grace, the event's detail with a cut or adjusted time, a
// redelivery, the outbox rows a settling enqueues by provider, state and kind) must come out as
// the ordinary path stores it. The same drawn webhooks and
// registrations go to the engine on SQLite (the ordinary path, one call at a time) and on
// PostgreSQL; every answer, job, event and outbox row must be equal, and so must the effects a
// dispatcher with room (drawn) is handed, each with the job it carries. A cancelled job of one
// provider may fire a transactional effect, which sends its webhook down the ordinary path, so
// both PostgreSQL paths meet in one job's history.
const { admin } = await postgresSuite("PostgreSQL ingest against SQLite's");

const EFFECTS: EffectDefinition[] = [
  { name: "on-failed", on: ["failed"], providers: ["fires"], handler: async () => {} },
  { name: "batch-done", on: ["succeeded"], kinds: ["batch"], handler: async () => {} },
  { name: "other-kind", kinds: ["other"], handler: async () => {} },
  { name: "in-tx", on: ["cancelled"], providers: ["fires"], transactional: async () => {} },
];
const HOUR = 3_600_000;

type Step =
  | { register: true; provider: string; job: number; kind: string | undefined }
  | { register: false; observation: Omit<Observation, "id"> & { job: number } };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.record({
      register: fc.constant(true as const),
      provider: fc.constantFrom("quiet", "fires"),
      job: fc.integer({ min: 0, max: 2 }),
      kind: fc.option(fc.constant("batch"), { nil: undefined }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc
      .record(
        {
          provider: fc.constantFrom("quiet", "fires"),
          job: fc.integer({ min: 0, max: 2 }),
          state: fc.constantFrom(...CANONICAL_STATES, "paused"),
          source: fc.constant("webhook" as const),
          rawState: fc.constantFrom("IN_PROGRESS", "done"),
          seq: fc.integer({ min: 0, max: 4 }),
          // Within range, or days ahead of the clock: then cut to now, and the event says so.
          updateTime: fc.constantFrom(T0 - HOUR, T0, T0 + 2 * HOUR, T0 + 30 * 24 * HOUR),
          deliveryId: fc.constantFrom("d-1", "d-2", "d-3", "d-4", "d-5", "d-6"),
          kind: fc.constant("batch"),
          result: fc.constantFrom<unknown>(null, { url: "x" }, "x".repeat(70_000)),
          error: fc.constantFrom<unknown>(null, { code: 1 }),
        },
        { requiredKeys: ["provider", "job", "state", "source"] },
      )
      .map((observation) => ({ register: false as const, observation })),
  },
);

const policyArb = fc.record({
  unknownJobs: fc.constantFrom<UnknownJobPolicy>("adopt", "registered-only"),
  graceSeconds: fc.integer({ min: 1, max: 600 }),
  reconcile: fc.boolean(),
});

describe("PostgreSQL's one-statement ingest stores what SQLite's ordinary path stores", () => {
  const schema = uniqueSchemaName();
  let postgres: PostgresStore;
  beforeAll(async () => {
    postgres = await openPostgresStore({ url: POSTGRES_TEST_URL, schema, max: 4 });
  });
  afterAll(async () => {
    await postgres.close();
    await dropSchema(admin, schema);
  });

  let history = 0;
  async function replay(store: Store, prefix: string, steps: Step[], policy: ProviderPolicy, room: boolean) {
    const clock = manualClock(T0);
    const engine = engineOf(
      createFinality({ store, clock, effects: EFFECTS, providers: { quiet: policy, fires: policy } }),
    );
    // A dispatcher in this process with room for every effect or for none: rows are enqueued
    // claimed and handed over after the commit, with the job the transaction committed when
    // nothing after the enqueue wrote it, or pending.
    const handed: unknown[] = [];
    engine.takeEffectHandoff({
      leaseMsForNext: () => (room ? 60_000 : null),
      enqueuedPending: () => void handed.push("pending"),
      take: (effect, job) => void handed.push({ name: effect.name, jobId: effect.jobId, job: job ?? "read" }),
    });
    const answers: unknown[] = [];
    for (const step of steps) {
      clock.advance(1_000);
      const id = `${prefix}-${step.register ? step.job : step.observation.job}`;
      const answer = step.register
        ? engine.register({ provider: step.provider, id, kind: step.kind })
        : engine.ingestTrusted({
            ...step.observation,
            id,
            deliveryId: step.observation.deliveryId && `${prefix}-${step.observation.deliveryId}`,
          });
      answers.push(await answer.then(withoutPrefix(prefix), (error: Error) => ({ error: error.message })));
    }
    const stored: unknown[] = [];
    for (const provider of ["quiet", "fires"])
      for (const job of [0, 1, 2]) {
        const key = { provider, id: `${prefix}-${job}` };
        const events = (await store.jobEvents(key)).map(({ seqNo: _, ...event }: JobEvent) => event);
        // Ids are drawn (uuid v7), so they differ; everything else must not.
        const outbox = (await store.listEffects({ provider, jobId: key.id })).items
          .map(({ id: _, ...effect }) => effect)
          .sort((a, b) => a.name.localeCompare(b.name));
        stored.push(withoutPrefix(prefix)({ job: await store.getJob(key), events, outbox }));
      }
    return { answers, stored, handed: withoutPrefix(prefix)(handed) };
  }

  it("for drawn webhooks and registrations, under drawn provider policies", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 12 }),
        policyArb,
        fc.boolean(),
        async (steps, policy, room) => {
          const prefix = `h${++history}`;
          const sqlite = createSqliteStore({ path: ":memory:" });
          try {
            const expected = await replay(sqlite, prefix, steps, policy, room);
            const actual = await replay(postgres, prefix, steps, policy, room);
            expect(actual).toEqual(expected);
          } finally {
            await sqlite.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);
});

/** The value with this history's prefix taken out of every string (ids, delivery ids). */
function withoutPrefix(prefix: string) {
  return (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null).replaceAll(`${prefix}-`, ""));
}
