import { describe, expect, it } from "vitest";
import { isFinalityError } from "../../../src/core/errors.js";
import type { Observation, UnknownJobPolicy } from "../../../src/core/model.js";
import { type EffectDefinition, effectIdempotencyKey } from "../../../src/engine/effect-definitions.js";
import { type IngestContext, ingestInTx, registerInTx } from "../../../src/engine/ingest.js";
import { effectsFiredHash } from "../../../src/store/lifecycle-store.js";
import type { Store } from "../../../src/store/store.js";
import { makeJob, T0 } from "../../helpers/records.js";
import { type ContractScope, collectPages, insertJobs } from "./harness.js";

const DAY = 86_400_000;
const key = { provider: "acme", id: "job-1" };
let ids = 0;

/** Effects the lifecycle cases watch: one for every job, two limited by kind, one transactional. */
function definitions(ran: string[]): EffectDefinition[] {
  const handler = async () => {};
  return [
    { name: "all", on: ["succeeded"], handler },
    { name: "images", on: ["succeeded"], kinds: ["image"], handler },
    { name: "texts", on: ["succeeded"], kinds: ["text"], handler },
    { name: "stuck-images", on: ["stuck"], kinds: ["image"], handler },
    { name: "ledger", on: ["succeeded"], transactional: async (job) => void ran.push(job.id) },
  ];
}

function context(
  now: number,
  effects: EffectDefinition[],
  unknownJobs: UnknownJobPolicy = "adopt",
): IngestContext {
  return {
    now,
    unknownJobs,
    effects,
    newId: () => `lifecycle-${++ids}`,
    firstCheckAt: (job) => job.submittedAt + 90_000,
  };
}

const observe = (store: Store, obs: Observation, ctx: IngestContext) =>
  store.transaction((tx) => ingestInTx(tx, obs, ctx));

const registerJob = (store: Store, kind: string | undefined, ctx: IngestContext, id = key.id) =>
  store.transaction((tx) => registerInTx(tx, { provider: key.provider, id, kind }, ctx));

async function outbox(store: Store, id = key.id) {
  const page = await store.listEffects({ provider: key.provider, jobId: id, limit: 500 });
  return page.items.map((e) => `${e.name}:${e.trigger}:${e.status}`).sort();
}

async function deliverAll(store: Store, now: number): Promise<void> {
  for (const effect of await store.claimEffects(now, 100, 60_000)) {
    const claimedUntil = effect.leaseUntil ?? 0;
    expect(await store.finishEffect({ id: effect.id, claimedUntil, kind: "delivered", at: now })).toBe(true);
  }
}

const settle = (deliveryId: string, extra: Partial<Observation> = {}): Observation => ({
  ...key,
  state: "succeeded",
  source: "webhook",
  deliveryId,
  result: { url: "https://example.test/out.png" },
  ...extra,
});

export function describeLifecycle(scope: ContractScope): void {
  describe("late registration", () => {
    it("enqueues the effects the job's kind now matches, once, under the stable key, and nothing that fired", async () => {
      const store = scope.store();
      const ran: string[] = [];
      const effects = definitions(ran);
      // The webhook beats the registration: adopted with no kind, settled, only the unfiltered effects.
      expect(await observe(store, settle("d-1"), context(T0, effects))).toMatchObject({
        settled: true,
        effects: ["all", "ledger"],
      });
      expect(await outbox(store)).toEqual(["all:succeeded:pending"]);

      const late = await registerJob(store, "image", context(T0 + 1000, effects));
      expect(late).toMatchObject({
        created: false,
        effects: ["images"],
        job: { kind: "image", registered: true },
      });
      expect(await outbox(store)).toEqual(["all:succeeded:pending", "images:succeeded:pending"]);
      const images = (await store.listEffects({ jobId: key.id })).items.find((e) => e.name === "images");
      expect(images?.idempotencyKey).toBe(effectIdempotencyKey(key.provider, key.id, "images", "succeeded"));
      // The transactional effect ran when the job settled, and not again.
      expect(ran).toEqual([key.id]);

      // Again, or with another kind (a kind once known never changes): nothing more.
      expect((await registerJob(store, "image", context(T0 + 2000, effects))).effects).toEqual([]);
      expect((await registerJob(store, "text", context(T0 + 3000, effects))).effects).toEqual([]);
      expect(await observe(store, settle("d-2"), context(T0 + 4000, effects))).toMatchObject({
        reason: "duplicate",
        effects: [],
      });
      expect(await outbox(store)).toEqual(["all:succeeded:pending", "images:succeeded:pending"]);
      expect(ran).toEqual([key.id]);
    });

    it("fires the stuck alerts a stuck open job's kind now matches", async () => {
      const store = scope.store();
      const effects = definitions([]);
      await insertJobs(store, [makeJob({ ...key, state: "running", stuck: true, registered: false })]);
      const late = await registerJob(store, "image", context(T0, effects));
      expect(late.effects).toEqual(["stuck-images"]);
      expect(await outbox(store)).toEqual(["stuck-images:stuck:pending"]);
      // When it settles, its settle effects follow its kind as usual.
      expect((await observe(store, settle("d-1"), context(T0 + 1, effects))).effects).toEqual([
        "all",
        "images",
        "ledger",
      ]);
    });

    it("of a job that is still open enqueues nothing: its effects follow the kind when it settles", async () => {
      const store = scope.store();
      const effects = definitions([]);
      await observe(
        store,
        { ...key, state: "running", source: "webhook", deliveryId: "d-0" },
        context(T0, effects),
      );
      expect((await registerJob(store, "image", context(T0 + 1, effects))).effects).toEqual([]);
      expect(await outbox(store)).toEqual([]);
      expect((await observe(store, settle("d-1"), context(T0 + 2, effects))).effects).toEqual([
        "all",
        "images",
        "ledger",
      ]);
    });
  });

  describe("tombstones", () => {
    it("pruning a settled job leaves its tombstone; a replayed or late webhook then changes nothing and fires nothing", async () => {
      const store = scope.store();
      const ran: string[] = [];
      const effects = definitions(ran);
      await registerJob(store, "image", context(T0, effects));
      await observe(store, settle("body-hash-1"), context(T0 + 1000, effects));
      await deliverAll(store, T0 + 2000);
      const fired = (await store.listEffects({ jobId: key.id })).items;
      // Fifteen days on: the delivery id and the job are both forgotten.
      expect(await store.prune("deliveries", T0 + 8 * DAY, 500)).toBe(1);
      expect(await store.prune("settledJobs", T0 + 15 * DAY, 500)).toBe(1);
      expect(await store.getJob(key)).toBeNull();
      const tombstone = {
        ...key,
        state: "succeeded",
        settledAt: T0 + 1000,
        effectsHash: effectsFiredHash(fired),
      };
      expect(await store.getTombstone(key)).toEqual(tombstone);
      expect(await store.transaction((tx) => tx.getTombstone(key))).toEqual(tombstone);
      expect(await store.getTombstone({ ...key, id: "other" })).toBeNull();

      const later = context(T0 + 16 * DAY, effects);
      // The captured body again (same delivery id), and a late redelivery of another scheme.
      for (const obs of [settle("body-hash-1"), settle("d-late", { state: "failed" })]) {
        expect(await observe(store, obs, later)).toEqual({
          applied: false,
          reason: "already-settled-pruned",
          job: null,
          settled: false,
          effects: [],
        });
      }
      expect(await store.getJob(key)).toBeNull();
      expect((await store.listEffects({ jobId: key.id })).items).toEqual(fired);
      expect(ran).toEqual([key.id]);
      const events = await store.jobEvents(key);
      expect(events.filter((e) => e.reason === "already-settled-pruned")).toHaveLength(2);

      // Registering it again would open it, poll it and fire its effects again: refused.
      const refused = await registerJob(store, "image", later).catch((error: unknown) => error);
      expect(isFinalityError(refused, "conflict")).toBe(true);
      expect(await store.getJob(key)).toBeNull();
    });

    it("are pruned after their own window, counted from when the job settled", async () => {
      const store = scope.store();
      const effects = definitions([]);
      for (const [i, id] of ["old", "new"].entries()) {
        await observe(store, { ...settle(`d-${id}`), id }, context(T0 + i * 100 * DAY, effects));
        await deliverAll(store, T0 + i * 100 * DAY);
      }
      expect(await store.prune("settledJobs", T0 + 200 * DAY, 500)).toBe(2);
      expect(await store.countPrunable("tombstones", T0 + 50 * DAY)).toBe(1);
      expect((await store.housekeepingStats()).oldest.tombstones).toBe(T0);
      expect(await store.prune("tombstones", T0 + 50 * DAY, 500)).toBe(1);
      expect(await store.getTombstone({ ...key, id: "old" })).toBeNull();
      expect(await store.getTombstone({ ...key, id: "new" })).toMatchObject({ settledAt: T0 + 100 * DAY });
      // Past its tombstone, an id is new again (the documented end of the guarantee).
      expect(
        await observe(store, { ...settle("d-old-2"), id: "old" }, context(T0 + 200 * DAY, effects)),
      ).toMatchObject({
        applied: true,
      });
    });

    it("a job whose effects are not all delivered is neither pruned nor tombstoned", async () => {
      const store = scope.store();
      await observe(store, settle("d-1"), context(T0, definitions([])));
      expect(await store.prune("settledJobs", T0 + 15 * DAY, 500)).toBe(0);
      expect(await store.getTombstone(key)).toBeNull();
      expect(await store.getJob(key)).not.toBeNull();
    });
  });

  describe("early-completion inbox", () => {
    it("parks an observation for an unregistered job instead of using it up; registration applies it in order", async () => {
      const store = scope.store();
      const ran: string[] = [];
      const effects = definitions(ran);
      const early = context(T0, effects, "registered-only");
      const running: Observation = { ...key, state: "running", source: "webhook", deliveryId: "d-1", seq: 1 };
      expect(await observe(store, running, early)).toMatchObject({
        applied: false,
        reason: "parked",
        job: null,
      });
      expect(await observe(store, settle("d-2", { seq: 2 }), { ...early, now: T0 + 10 })).toMatchObject({
        reason: "parked",
      });
      // The sender's retry: a duplicate, and the completion is still kept.
      expect(await observe(store, settle("d-2", { seq: 2 }), { ...early, now: T0 + 20 })).toMatchObject({
        reason: "duplicate-delivery",
      });
      expect(await store.getJob(key)).toBeNull();
      const parked = await store.listParked({ provider: key.provider, id: key.id });
      expect(parked.items.map((p) => [p.observation.state, p.parkedAt])).toEqual([
        ["succeeded", T0 + 10],
        ["running", T0],
      ]);
      expect(parked.items[0]?.observation).toEqual(settle("d-2", { seq: 2 }));
      expect((await store.listParked({ provider: "other" })).items).toEqual([]);
      expect(ran).toEqual([]);

      const registered = await registerJob(store, "image", context(T0 + 30, effects, "registered-only"));
      expect(registered).toMatchObject({
        created: true,
        parked: 2,
        effects: ["all", "images", "ledger"],
        job: { state: "succeeded", kind: "image", registered: true, maxSeq: 2, settledBy: "webhook" },
      });
      expect(registered.job.result).toEqual({ url: "https://example.test/out.png" });
      expect(await store.getJob(key)).toEqual(registered.job);
      expect((await store.listParked({})).items).toEqual([]);
      expect(ran).toEqual([key.id]);
      const events = await store.jobEvents(key);
      expect(events.map((e) => [e.state, e.applied, e.reason])).toEqual([
        ["running", false, "parked"],
        ["succeeded", false, "parked"],
        ["succeeded", false, "duplicate-delivery"],
        ["pending", true, null],
        ["running", true, null],
        ["succeeded", true, null],
      ]);
      expect(events[5]?.detail).toMatchObject({ parkedAt: T0 + 10 });
      // Nothing is left to apply twice.
      expect(await registerJob(store, "image", context(T0 + 40, effects, "registered-only"))).toMatchObject({
        parked: 0,
        effects: [],
      });
      expect(ran).toEqual([key.id]);
    });

    it("applies parked observations in arrival order, through the reducer", async () => {
      const store = scope.store();
      const early = context(T0, [], "registered-only");
      await observe(store, settle("d-1"), early);
      await observe(store, settle("d-2", { state: "failed" }), early);
      await observe(store, { ...key, state: "running", source: "webhook", deliveryId: "d-3" }, early);
      const registered = await registerJob(store, undefined, early);
      // The first completion wins; the other terminal flags the job; running cannot go back.
      expect(registered.job).toMatchObject({ state: "succeeded", conflict: true });
      const events = await store.jobEvents(key);
      expect(events.slice(-3).map((e) => e.reason)).toEqual([null, "conflicting-terminal", "lower-rank"]);
    });

    it("parkObservation dedupes by delivery id and refuses a job that exists (the work is run again)", async () => {
      const store = scope.store();
      const obs: Observation = { ...key, state: "succeeded", source: "webhook", deliveryId: "d-1" };
      const first = await store.transaction(async (tx) => [
        await tx.parkObservation(obs, T0),
        await tx.parkObservation(obs, T0 + 1),
        await tx.parkObservation({ ...obs, deliveryId: undefined }, T0 + 2),
        await tx.parkObservation({ ...obs, deliveryId: undefined }, T0 + 3),
      ]);
      expect(first).toEqual([true, false, true, true]);
      await insertJobs(store, [makeJob({ ...key, id: "exists" })]);
      const refused = await store
        .transaction((tx) => tx.parkObservation({ ...obs, id: "exists" }, T0))
        .catch((error: unknown) => error);
      expect(isFinalityError(refused, "version-conflict")).toBe(true);
      const taken = await store.transaction((tx) => tx.takeParked(key));
      expect(taken.map((p) => p.parkedAt)).toEqual([T0, T0 + 2, T0 + 3]);
      expect(await store.transaction((tx) => tx.takeParked(key))).toEqual([]);
    });

    it("a completion parked while its job is being registered is applied, never left behind", async () => {
      const store = scope.store();
      const effects = definitions([]);
      for (let i = 0; i < 20; i++) {
        const id = `race-${i}`;
        const ctx = context(T0 + i, effects, "registered-only");
        await Promise.all([
          observe(store, { ...settle(`d-${i}`), id }, ctx),
          registerJob(store, "image", ctx, id),
        ]);
        expect(await store.getJob({ ...key, id })).toMatchObject({ state: "succeeded" });
      }
      expect((await store.listParked({})).items).toEqual([]);
    });

    // Issue 33, defect 3: a discovery sweep adopted the job (the list still said running) and the
    // completion parked for it waited for a registration that never came; its redelivery was a
    // duplicate. Every path that creates a job applies what is parked for it, in its transaction.
    it("a job created by an adopting observation (discovery) applies the completion parked for it", async () => {
      const store = scope.store();
      const ran: string[] = [];
      const effects = definitions(ran);
      const early = context(T0, effects, "registered-only");
      expect(await observe(store, settle("d-1"), early)).toMatchObject({ reason: "parked" });
      const listed: Observation = { ...key, state: "running", source: "discovery" };
      const adopted = await observe(store, listed, context(T0 + 10, effects, "adopt"));
      expect(adopted).toMatchObject({
        applied: true,
        effects: ["all", "ledger"],
        job: { state: "succeeded", settledBy: "webhook" },
      });
      expect(await store.getJob(key)).toMatchObject({ state: "succeeded", settledAt: T0 + 10 });
      expect((await store.listParked({})).items).toEqual([]);
      expect(await outbox(store)).toEqual(["all:succeeded:pending"]);
      expect(ran).toEqual([key.id]);
      const events = await store.jobEvents(key);
      expect(events.map((e) => [e.source, e.state, e.applied, e.reason])).toEqual([
        ["webhook", "succeeded", false, "parked"],
        ["discovery", "running", true, null],
        ["webhook", "succeeded", true, null],
      ]);
      expect(events[2]?.detail).toMatchObject({ parkedAt: T0 });
      // The sender's redelivery stays a duplicate, and now the job says why.
      expect(await observe(store, settle("d-1"), context(T0 + 20, effects, "registered-only"))).toMatchObject(
        {
          reason: "duplicate-delivery",
          job: { state: "succeeded" },
        },
      );
    });

    it("a completion parked while an adopting observation creates its job is applied, never left behind", async () => {
      const store = scope.store();
      const effects = definitions([]);
      for (let i = 0; i < 20; i++) {
        const id = `adopt-race-${i}`;
        await Promise.all([
          observe(store, { ...settle(`d-${i}`), id }, context(T0 + i, effects, "registered-only")),
          observe(store, { ...key, id, state: "running", source: "discovery" }, context(T0 + i, effects)),
        ]);
        expect(await store.getJob({ ...key, id })).toMatchObject({ state: "succeeded" });
      }
      expect((await store.listParked({})).items).toEqual([]);
    });

    it("lists parked observations newest first, page by page, and prunes them after their window", async () => {
      const store = scope.store();
      const early = context(T0, [], "registered-only");
      for (let i = 0; i < 7; i++) {
        await observe(store, { ...settle(`d-${i}`), id: `job-${i % 3}` }, { ...early, now: T0 + i * DAY });
      }
      const all = await collectPages((cursor) => store.listParked({ limit: 3, cursor }));
      expect(all.pages).toBe(3);
      expect(all.items.map((p) => p.parkedAt)).toEqual([6, 5, 4, 3, 2, 1, 0].map((d) => T0 + d * DAY));
      expect((await store.listParked({ id: "job-0" })).items.map((p) => p.id)).toEqual([
        "job-0",
        "job-0",
        "job-0",
      ]);
      expect(await store.countPrunable("parked", T0 + 2 * DAY)).toBe(2);
      expect((await store.housekeepingStats()).oldest.parked).toBe(T0);
      expect(await store.prune("parked", T0 + 2 * DAY, 500)).toBe(2);
      expect((await store.listParked({})).items).toHaveLength(5);
    });
  });
}
