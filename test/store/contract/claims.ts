import { describe, expect, it } from "vitest";
import type { Effect, Job } from "../../../src/core/model.js";
import { makeEffect, makeJob, T0 } from "../../helpers/records.js";
import { type ContractScope, insertEffects, insertJobs } from "./harness.js";

const LEASE_MS = 30_000;
const byId = (effects: readonly Effect[]) => effects.map((e) => e.id).sort();

export function describeClaims(scope: ContractScope): void {
  describe("claimEffects and finishEffect", () => {
    it("leases due effects; a leased one is claimed again only once its lease has passed", async () => {
      const due = [0, 1, 2].map((i) => makeEffect({ jobId: `job-${i}`, nextAttemptAt: T0 - i }));
      const later = makeEffect({ jobId: "job-later", nextAttemptAt: T0 + 1 });
      const done = makeEffect({ jobId: "job-done", status: "delivered", nextAttemptAt: T0 - 5 });
      await insertEffects(scope.store(), [...due, later, done]);
      const store = scope.store();

      const claimed = await store.claimEffects(T0, 10, LEASE_MS);
      expect(byId(claimed)).toEqual(byId(due));
      for (const effect of claimed)
        expect(effect).toMatchObject({ status: "delivering", attempts: 1, leaseUntil: T0 + LEASE_MS });
      expect(await store.getEffect(due[0]!.id)).toMatchObject({
        status: "delivering",
        leaseUntil: T0 + LEASE_MS,
      });

      expect(await store.claimEffects(T0 + LEASE_MS - 1, 10, LEASE_MS)).toEqual([
        expect.objectContaining({ id: later.id }),
      ]);
      const reclaimed = await store.claimEffects(T0 + LEASE_MS, 10, LEASE_MS);
      expect(byId(reclaimed)).toEqual(byId(due));
      for (const effect of reclaimed)
        expect(effect).toMatchObject({ attempts: 2, leaseUntil: T0 + 2 * LEASE_MS });
    });

    it("an effect enqueued claimed (handed to a dispatcher) keeps its lease: claimed again only once it has passed", async () => {
      // What a transaction writes for the dispatcher it hands the effect to (claimedOnEnqueue).
      const handed = makeEffect({
        jobId: "job-handed",
        status: "delivering",
        attempts: 1,
        nextAttemptAt: T0,
        leaseUntil: T0 + LEASE_MS,
      });
      await insertEffects(scope.store(), [handed]);
      const store = scope.store();
      expect(await store.getEffect(handed.id)).toMatchObject({
        status: "delivering",
        attempts: 1,
        leaseUntil: T0 + LEASE_MS,
      });
      expect(await store.claimEffects(T0 + LEASE_MS - 1, 10, LEASE_MS)).toEqual([]);
      expect(await store.extendEffectLease(handed.id, T0 + LEASE_MS, T0 + 2 * LEASE_MS)).toBe(true);
      expect(
        await store.finishEffect({
          id: handed.id,
          claimedUntil: T0 + 2 * LEASE_MS,
          kind: "delivered",
          at: T0 + 1,
        }),
      ).toBe(true);
      expect(await store.getEffect(handed.id)).toMatchObject({ status: "delivered", attempts: 1 });

      // One whose dispatcher died: its lease runs out, and a claim takes it (the second attempt).
      const orphan = makeEffect({
        jobId: "job-orphan",
        status: "delivering",
        attempts: 1,
        nextAttemptAt: T0,
        leaseUntil: T0 + LEASE_MS,
      });
      await insertEffects(scope.store(), [orphan]);
      expect(await store.claimEffects(T0 + LEASE_MS, 10, LEASE_MS)).toEqual([
        expect.objectContaining({ id: orphan.id, attempts: 2, leaseUntil: T0 + 2 * LEASE_MS }),
      ]);
    });

    it("claims at most `limit` and never the same row twice", async () => {
      const effects = Array.from({ length: 7 }, (_, i) => makeEffect({ jobId: `job-${i}` }));
      await insertEffects(scope.store(), effects);
      const store = scope.store();
      const batches = await Promise.all([1, 2, 3].map(() => store.claimEffects(T0, 3, LEASE_MS)));
      expect(batches.map((b) => b.length).sort()).toEqual([1, 3, 3]);
      expect(byId(batches.flat())).toEqual(byId(effects));
    });

    it("finishEffect with a lost claim is a no-op; with the current claim it records the outcome", async () => {
      const effect = makeEffect({ jobId: "job-1" });
      await insertEffects(scope.store(), [effect]);
      const store = scope.store();
      const [first] = await store.claimEffects(T0, 1, LEASE_MS);
      const [second] = await store.claimEffects(first!.leaseUntil!, 1, LEASE_MS);
      expect(second!.leaseUntil).not.toBe(first!.leaseUntil);

      const stale = {
        id: effect.id,
        claimedUntil: first!.leaseUntil!,
        kind: "delivered" as const,
        at: T0 + 1,
      };
      expect(await store.finishEffect(stale)).toBe(false);
      expect(await store.getEffect(effect.id)).toMatchObject({ status: "delivering", deliveredAt: null });

      const retry = {
        id: effect.id,
        claimedUntil: second!.leaseUntil!,
        kind: "retry" as const,
        at: T0 + 2,
        nextAttemptAt: T0 + 500_000,
        error: "HTTP 503",
      };
      expect(await store.finishEffect(retry)).toBe(true);
      expect(await store.finishEffect(retry)).toBe(false);
      expect(await store.getEffect(effect.id)).toMatchObject({
        status: "pending",
        nextAttemptAt: T0 + 500_000,
        leaseUntil: null,
        lastError: "HTTP 503",
        attempts: 2,
      });
      expect(await store.claimEffects(T0 + 499_999, 5, LEASE_MS)).toEqual([]);
      const [third] = await store.claimEffects(T0 + 500_000, 5, LEASE_MS);
      expect(third).toMatchObject({ id: effect.id, attempts: 3 });
      const delivered = {
        id: effect.id,
        claimedUntil: third!.leaseUntil!,
        kind: "delivered" as const,
        at: T0 + 9,
      };
      expect(await store.finishEffect(delivered)).toBe(true);
      expect(await store.getEffect(effect.id)).toMatchObject({ status: "delivered", deliveredAt: T0 + 9 });
      expect(await store.claimEffects(T0 + 10 * LEASE_MS, 5, LEASE_MS)).toEqual([]);
    });

    it("extendEffectLease moves the lease only while the caller holds the claim", async () => {
      const effect = makeEffect({ jobId: "job-1" });
      await insertEffects(scope.store(), [effect]);
      const store = scope.store();
      const [first] = await store.claimEffects(T0, 1, LEASE_MS);
      const heldUntil = first!.leaseUntil!;

      // Held: the lease moves, and the row is not due at the old expiry any more.
      expect(await store.extendEffectLease(effect.id, heldUntil, heldUntil + LEASE_MS)).toBe(true);
      expect(await store.getEffect(effect.id)).toMatchObject({
        status: "delivering",
        leaseUntil: heldUntil + LEASE_MS,
        attempts: 1,
      });
      expect(await store.claimEffects(heldUntil, 1, LEASE_MS)).toEqual([]);
      // The old claim value no longer holds it; finishing needs the extended one.
      expect(await store.extendEffectLease(effect.id, heldUntil, heldUntil + 5 * LEASE_MS)).toBe(false);
      expect(
        await store.finishEffect({ id: effect.id, claimedUntil: heldUntil, kind: "delivered", at: T0 }),
      ).toBe(false);

      // Taken over by another dispatcher after the extended lease ran out: the first cannot extend.
      const [second] = await store.claimEffects(heldUntil + LEASE_MS, 1, LEASE_MS);
      expect(second).toMatchObject({ id: effect.id, attempts: 2 });
      expect(await store.extendEffectLease(effect.id, heldUntil + LEASE_MS, T0 + 100 * LEASE_MS)).toBe(false);
      expect((await store.getEffect(effect.id))?.leaseUntil).toBe(second!.leaseUntil);

      // Finished: nothing to extend.
      const finished = {
        id: effect.id,
        claimedUntil: second!.leaseUntil!,
        kind: "delivered" as const,
        at: T0,
      };
      expect(await store.finishEffect(finished)).toBe(true);
      expect(await store.extendEffectLease(effect.id, second!.leaseUntil!, T0 + 100 * LEASE_MS)).toBe(false);
      expect(await store.getEffect(effect.id)).toMatchObject({ status: "delivered", leaseUntil: null });
    });

    it("a dead effect is never claimed again", async () => {
      const effect = makeEffect({ jobId: "job-1" });
      await insertEffects(scope.store(), [effect]);
      const [claimed] = await scope.store().claimEffects(T0, 1, LEASE_MS);
      const dead = {
        id: effect.id,
        claimedUntil: claimed!.leaseUntil!,
        kind: "dead" as const,
        at: T0,
        error: "410",
      };
      expect(await scope.store().finishEffect(dead)).toBe(true);
      expect(await scope.store().getEffect(effect.id)).toMatchObject({ status: "dead", lastError: "410" });
      expect(await scope.store().claimEffects(T0 + 100 * LEASE_MS, 5, LEASE_MS)).toEqual([]);
    });
  });

  describe("claimDueJobs", () => {
    const NOW = T0 + 100_000;
    const LEASE_UNTIL = NOW + 60_000;
    // Inserted in an order unlike their due order, so that insertion order cannot pass for "oldest first".
    const jobs = [
      makeJob({ id: "due-50", state: "running", nextCheckAt: T0 + 50_000 }),
      makeJob({ id: "due-10", state: "pending", nextCheckAt: T0 + 10_000 }),
      makeJob({ id: "due-now", state: "running", nextCheckAt: NOW }),
      makeJob({ id: "due-30", state: "pending", nextCheckAt: T0 + 30_000 }),
      makeJob({ id: "future", state: "running", nextCheckAt: NOW + 1 }),
      makeJob({ id: "unscheduled", state: "running", nextCheckAt: null }),
      makeJob({ id: "settled", state: "succeeded", nextCheckAt: null }),
      makeJob({ provider: "openai", id: "due-20", state: "running", nextCheckAt: T0 + 20_000 }),
    ];

    const ids = (jobs: readonly Job[]) => jobs.map((j) => j.id).sort();

    it("claims only due open jobs, the oldest due first, and pushes their check to leaseUntil", async () => {
      await insertJobs(scope.store(), jobs);
      const store = scope.store();
      expect(ids(await store.claimDueJobs(NOW, 1, LEASE_UNTIL))).toEqual(["due-10"]);
      const second = await store.claimDueJobs(NOW, 2, LEASE_UNTIL);
      expect(ids(second)).toEqual(["due-20", "due-30"]);
      for (const job of second) expect(job.nextCheckAt).toBe(LEASE_UNTIL);
      expect(await store.getJob({ provider: "openai", id: "due-20" })).toMatchObject({
        nextCheckAt: LEASE_UNTIL,
      });
      expect(ids(await store.claimDueJobs(NOW, 10, LEASE_UNTIL))).toEqual(["due-50", "due-now"]);
      expect(await store.claimDueJobs(NOW, 10, LEASE_UNTIL)).toEqual([]);
      expect(await store.getJob({ provider: "generic", id: "future" })).toMatchObject({
        nextCheckAt: NOW + 1,
      });
      const expired = await store.claimDueJobs(LEASE_UNTIL, 10, LEASE_UNTIL + 1);
      expect(ids(expired)).toEqual(["due-10", "due-20", "due-30", "due-50", "due-now", "future"]);
      expect(await store.getJob({ provider: "generic", id: "unscheduled" })).toMatchObject({
        nextCheckAt: null,
      });
    });

    // Fails on SQLite (src/store/sqlite/sqlite-store.ts, claimDueJobs): `UPDATE … RETURNING` hands
    // rows back in no promised order (in practice job_no order), while the PostgreSQL adapter sorts
    // them by due time. Left failing on purpose until the SQLite adapter sorts its result.
    it("returns the claimed jobs ordered oldest due first", async () => {
      await insertJobs(scope.store(), jobs);
      const claimed = await scope.store().claimDueJobs(NOW, 10, LEASE_UNTIL);
      expect(claimed.map((j) => j.id)).toEqual(["due-10", "due-20", "due-30", "due-50", "due-now"]);
    });

    it("respects the providers filter", async () => {
      await insertJobs(scope.store(), jobs);
      const openai = await scope.store().claimDueJobs(NOW, 10, LEASE_UNTIL, ["openai"]);
      expect(ids(openai)).toEqual(["due-20"]);
      expect(await scope.store().claimDueJobs(NOW, 10, LEASE_UNTIL, ["gemini"])).toEqual([]);
      const generic = await scope.store().claimDueJobs(NOW, 10, LEASE_UNTIL, ["generic", "gemini"]);
      expect(ids(generic)).toEqual(["due-10", "due-30", "due-50", "due-now"]);
      expect(await scope.store().getJob({ provider: "openai", id: "due-20" })).toMatchObject({
        nextCheckAt: LEASE_UNTIL,
      });
    });
  });
}
