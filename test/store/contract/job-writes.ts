import { describe, expect, it } from "vitest";
import { makeEffect, makeEvent, makeJob, T0 } from "../../helpers/records.js";
import { type ContractScope, insertJobs } from "./harness.js";

const key = { provider: "generic", id: "job-1" };

export function describeJobWrites(scope: ContractScope): void {
  describe("job writes", () => {
    it("stores and returns every field of a job unchanged", async () => {
      const job = makeJob({
        ...key,
        kind: "batch",
        state: "failed",
        version: 7,
        maxSeq: 42,
        maxUpdateTime: T0 + 5,
        settledBy: "reconcile",
        registered: false,
        pollAttempts: 3,
        lastPolledAt: T0 + 9,
        stuck: true,
        conflict: true,
        anomaly: "not-found",
        lastPollError: {
          at: T0 + 9,
          message: "GET http://127.0.0.1:1/jobs/job-1: status API unreachable: ECONNREFUSED",
          url: "http://127.0.0.1:1/jobs/job-1",
          code: "ECONNREFUSED",
          status: null,
        },
        metadata: { user: "ü", tags: [1, 2], nested: { ok: true } },
        result: [1, "two", null],
        error: { message: "boom" },
      });
      await insertJobs(scope.store(), [job]);
      expect(await scope.store().getJob(key)).toEqual(job);
      expect(await scope.store().transaction((tx) => tx.getJob(key))).toEqual(job);
      expect(await scope.store().getJob({ ...key, id: "other" })).toBeNull();
    });

    it("an update sets and clears the last poll error, and moves the last poll's time", async () => {
      const job = makeJob({ ...key });
      await insertJobs(scope.store(), [job]);
      const failed = {
        ...job,
        version: 2,
        lastPolledAt: T0 + 1,
        lastPollError: {
          at: T0 + 1,
          message: "GET x: status API answered 503",
          url: "x",
          code: null,
          status: 503,
        },
      };
      expect(await scope.store().transaction((tx) => tx.updateJob(failed, 1))).toBe(true);
      expect(await scope.store().getJob(key)).toEqual(failed);
      const answered = { ...failed, version: 3, lastPollError: null, lastPolledAt: T0 + 2 };
      expect(await scope.store().transaction((tx) => tx.updateJob(answered, 2))).toBe(true);
      expect(await scope.store().getJob(key)).toEqual(answered);
    });

    it("stores every kind of JSON value as given: booleans, bare strings and numbers, arrays of them", async () => {
      const values: unknown[] = [
        true,
        false,
        [false, "x"],
        [true],
        "text",
        0,
        -1.5,
        [null, 1],
        { a: [false] },
      ];
      const jobs = values.map((value, i) =>
        makeJob({ id: `json-${i}`, state: "succeeded", result: value, metadata: value, error: value }),
      );
      await insertJobs(scope.store(), jobs);
      for (const job of jobs) expect(await scope.store().getJob(job)).toEqual(job);
      await scope.store().transaction((tx) => tx.appendEvent(makeEvent({ id: "json-0", detail: true })));
      expect((await scope.store().jobEvents({ provider: "generic", id: "json-0" }))[0]?.detail).toBe(true);
    });

    it("a failed statement caught inside a transaction spoils only itself", async () => {
      const job = makeJob({ ...key });
      await scope.store().transaction(async (tx) => {
        await expect(tx.execute("SELECT * FROM no_such_table")).rejects.toThrow();
        expect(await tx.insertJob(job)).toBe(true);
      });
      expect(await scope.store().getJob(key)).toEqual(job);
    });

    it("insertJob on an existing key returns false and changes nothing", async () => {
      const job = makeJob({ ...key, state: "running" });
      await insertJobs(scope.store(), [job]);
      const again = await scope
        .store()
        .transaction((tx) => tx.insertJob({ ...job, state: "succeeded", version: 9 }));
      expect(again).toBe(false);
      expect(await scope.store().getJob(key)).toEqual(job);
    });

    it("updateJob writes only when the stored version is the expected one", async () => {
      const v1 = makeJob({ ...key, state: "pending", version: 1 });
      const v2 = { ...v1, state: "running" as const, version: 2, maxSeq: 1 };
      await insertJobs(scope.store(), [v1]);
      expect(await scope.store().transaction((tx) => tx.updateJob(v2, 1))).toBe(true);
      const stale = { ...v1, state: "failed" as const, version: 2, result: { lost: true } };
      expect(await scope.store().transaction((tx) => tx.updateJob(stale, 1))).toBe(false);
      expect(await scope.store().transaction((tx) => tx.updateJob(stale, 3))).toBe(false);
      expect(await scope.store().getJob(key)).toEqual(v2);
      const missing = makeJob({ ...key, id: "missing" });
      expect(await scope.store().transaction((tx) => tx.updateJob(missing, 1))).toBe(false);
      expect(await scope.store().getJob(missing)).toBeNull();
    });

    it("a transaction reads its own writes", async () => {
      const seen = await scope.store().transaction(async (tx) => {
        await tx.insertJob(makeJob({ ...key, version: 1 }));
        await tx.updateJob(makeJob({ ...key, version: 2, state: "running" }), 1);
        return tx.getJob(key);
      });
      expect(seen).toMatchObject({ state: "running", version: 2 });
    });

    it("recordDelivery is true once per (provider, delivery id)", async () => {
      const results = await scope
        .store()
        .transaction(async (tx) => [
          await tx.recordDelivery("generic", "d-1", T0),
          await tx.recordDelivery("generic", "d-1", T0 + 1),
          await tx.recordDelivery("openai", "d-1", T0),
          await tx.recordDelivery("generic", "d-2", T0),
        ]);
      expect(results).toEqual([true, false, true, true]);
      expect(await scope.store().transaction((tx) => tx.recordDelivery("generic", "d-1", T0 + 2))).toBe(
        false,
      );
    });

    it("appendEvent refuses a dedupe key used before, and never dedupes events without one", async () => {
      await insertJobs(scope.store(), [makeJob(key)]);
      const results = await scope
        .store()
        .transaction(async (tx) => [
          await tx.appendEvent(makeEvent({ ...key, dedupeKey: "lease-expiry:a:1:running" })),
          await tx.appendEvent(makeEvent({ ...key, dedupeKey: "lease-expiry:a:1:running", state: "lost" })),
          await tx.appendEvent(makeEvent({ ...key, dedupeKey: "lease-expiry:a:2:running" })),
          await tx.appendEvent(makeEvent({ ...key, dedupeKey: null })),
          await tx.appendEvent(makeEvent({ ...key, dedupeKey: null })),
        ]);
      expect(results).toEqual([true, false, true, true, true]);
      const again = await scope
        .store()
        .transaction((tx) => tx.appendEvent(makeEvent({ ...key, dedupeKey: "lease-expiry:a:2:running" })));
      expect(again).toBe(false);
      const events = await scope.store().jobEvents(key);
      expect(events).toHaveLength(4);
      expect(events.map((e) => e.state)).not.toContain("lost");
    });

    it("enqueueEffect adds one row per (job, effect name, trigger)", async () => {
      const first = makeEffect({ jobId: "job-1", name: "notify", trigger: "succeeded" });
      const results = await scope
        .store()
        .transaction(async (tx) => [
          await tx.enqueueEffect(first),
          await tx.enqueueEffect(makeEffect({ jobId: "job-1", name: "notify", trigger: "succeeded" })),
          await tx.enqueueEffect(makeEffect({ jobId: "job-1", name: "bill" })),
          await tx.enqueueEffect(makeEffect({ jobId: "job-2", name: "notify" })),
          await tx.enqueueEffect(makeEffect({ jobId: "job-1", name: "notify", provider: "openai" })),
        ]);
      expect(results).toEqual([true, false, true, true, true]);
      // A stuck alert is another trigger: it may join the settled row, once.
      const stuck = await scope
        .store()
        .transaction(async (tx) => [
          await tx.enqueueEffect(makeEffect({ jobId: "job-1", name: "notify", trigger: "stuck" })),
          await tx.enqueueEffect(makeEffect({ jobId: "job-1", name: "notify", trigger: "stuck" })),
        ]);
      expect(stuck).toEqual([true, false]);
      expect(await scope.store().getEffect(first.id)).toEqual(first);
      const forJob = await scope.store().listEffects({ provider: "generic", jobId: "job-1" });
      expect(forJob.items.map((e) => `${e.name}:${e.trigger}`).sort()).toEqual([
        "bill:succeeded",
        "notify:stuck",
        "notify:succeeded",
      ]);
    });

    it("updateEffect rewrites an outbox row", async () => {
      const effect = makeEffect({ jobId: "job-1" });
      const updated = { ...effect, status: "dead" as const, attempts: 5, lastError: "gone" };
      const read = await scope.store().transaction(async (tx) => {
        await tx.enqueueEffect(effect);
        await tx.updateEffect(updated);
        return tx.getEffect(effect.id);
      });
      expect(read).toEqual(updated);
      expect(await scope.store().getEffect(effect.id)).toEqual(updated);
      expect(await scope.store().getEffect("missing")).toBeNull();
    });

    // Issue #33.12: PostgreSQL stored both as "x\uFFFD", so the second job's failure became a
    // conflicting terminal of the first. Every store refuses such an id instead of merging it.
    it("refuses ids holding half a surrogate pair rather than merging two of them into one row", async () => {
      const store = scope.store();
      for (const id of ["x\ud800", "x\udc00"]) {
        await expect(
          store.transaction((tx) => tx.insertJob(makeJob({ provider: "generic", id }))),
        ).rejects.toMatchObject({ code: "invalid-request" });
        await expect(
          store.transaction((tx) =>
            tx.parkObservation({ provider: "generic", id, state: "failed", source: "webhook" }, T0),
          ),
        ).rejects.toMatchObject({ code: "invalid-request" });
      }
      expect(await store.getJob({ provider: "generic", id: "x\ufffd" })).toBeNull();
      expect((await store.listJobs({})).items).toEqual([]);
      expect((await store.listParked({ limit: 10 })).items).toEqual([]);
    });
  });
}
