import { describe, expect, it } from "vitest";
import { FinalityError, isFinalityError } from "../../../src/core/errors.js";
import type { Store } from "../../../src/store/store.js";
import { makeEvent, makeJob, T0 } from "../../helpers/records.js";
import { type ContractScope, insertJobs } from "./harness.js";

const job = (id: string) => makeJob({ provider: "generic", id });

async function writeSome(store: Store, id: string): Promise<void> {
  await insertJobs(store, [job(id)]);
  await store.transaction(async (tx) => {
    await tx.appendEvent(makeEvent({ provider: "generic", id, dedupeKey: `k-${id}` }));
    await tx.recordDelivery("generic", `d-${id}`, T0);
  });
}

export function describeTransactions(scope: ContractScope): void {
  describe("migrations", () => {
    it("a fresh store is ready", async () => {
      expect(await scope.store().ready()).toBe(true);
    });

    it("reopening applies nothing twice and keeps the data", async (context) => {
      const { reopen } = scope.fixture();
      if (!reopen) return context.skip();
      await writeSome(scope.store(), "kept");
      const before = await scope.store().jobEvents({ provider: "generic", id: "kept" });
      await scope.store().close();
      for (let i = 0; i < 2; i++) {
        const again = scope.track(await reopen());
        expect(await again.ready()).toBe(true);
        expect(await again.getJob(job("kept"))).toEqual(job("kept"));
        expect(await again.jobEvents(job("kept"))).toEqual(before);
        expect(await again.transaction((tx) => tx.recordDelivery("generic", "d-kept", T0))).toBe(false);
        await again.close();
      }
    });
  });

  describe("transactions", () => {
    it("resolve with the work's value after it is committed", async () => {
      const value = await scope.store().transaction(async (tx) => {
        await tx.insertJob(job("a"));
        return { answer: 42 };
      });
      expect(value).toEqual({ answer: 42 });
      expect(await scope.store().getJob(job("a"))).not.toBeNull();
    });

    it("a throwing work rolls back only its own writes; concurrent ones commit", async () => {
      const boom = new Error("boom");
      const store = scope.store();
      const outcomes = await Promise.allSettled([
        writeSome(store, "a"),
        store.transaction(async (tx) => {
          await tx.insertJob(job("b"));
          await tx.appendEvent(makeEvent({ provider: "generic", id: "b", dedupeKey: "k-b" }));
          await tx.recordDelivery("generic", "d-b", T0);
          throw boom;
        }),
        writeSome(store, "c"),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect((outcomes[1] as PromiseRejectedResult).reason).toBe(boom);
      expect(await store.getJob(job("a"))).not.toBeNull();
      expect(await store.getJob(job("c"))).not.toBeNull();
      expect(await store.getJob(job("b"))).toBeNull();
      expect(await store.jobEvents(job("b"))).toEqual([]);
      // The rolled-back delivery id and dedupe key are free again; the committed ones are not.
      const reuse = await store.transaction(async (tx) => [
        await tx.recordDelivery("generic", "d-b", T0),
        await tx.appendEvent(makeEvent({ provider: "generic", id: "b", dedupeKey: "k-b" })),
        await tx.recordDelivery("generic", "d-a", T0),
      ]);
      expect(reuse).toEqual([true, true, false]);
    });

    it("re-runs a work that throws version-conflict, after rolling back its first attempt", async () => {
      let runs = 0;
      const inserted = await scope.store().transaction(async (tx) => {
        runs += 1;
        const first = await tx.insertJob(job("x"));
        const fresh = await tx.recordDelivery("generic", "d-x", T0);
        if (runs === 1) throw new FinalityError("version-conflict", "raced");
        return [first, fresh];
      });
      expect(runs).toBe(2);
      expect(inserted).toEqual([true, true]);
      expect(await scope.store().getJob(job("x"))).toEqual(job("x"));
    });

    it("does not re-run other errors, and gives up on a conflict that never ends", async () => {
      let runs = 0;
      const other = scope.store().transaction(async () => {
        runs += 1;
        throw new FinalityError("conflict", "no");
      });
      await expect(other).rejects.toMatchObject({ code: "conflict" });
      expect(runs).toBe(1);
      let conflicts = 0;
      const endless = scope.store().transaction(async () => {
        conflicts += 1;
        throw new FinalityError("version-conflict", "again");
      });
      const error = await endless.then(
        () => null,
        (e: unknown) => e,
      );
      expect(isFinalityError(error, "version-conflict")).toBe(true);
      expect(conflicts).toBeGreaterThan(1);
      expect(conflicts).toBeLessThan(100);
    });

    it("two instances on one database: same-key inserts and CAS writes have one winner", async (context) => {
      const { openSecond } = scope.fixture();
      if (!openSecond) return context.skip();
      const first = scope.store();
      const second = scope.track(await openSecond());
      for (let round = 0; round < 20; round++) {
        const id = `race-${round}`;
        const inserts = await Promise.all(
          [first, second].map((s) =>
            s.transaction((tx) => tx.insertJob({ ...job(id), kind: s === first ? "1" : "2" })),
          ),
        );
        expect(inserts.filter(Boolean)).toHaveLength(1);
        const winner = inserts[0] ? "1" : "2";
        expect(await second.getJob(job(id))).toMatchObject({ kind: winner });
        const updates = await Promise.all(
          [first, second].map((s, i) =>
            s.transaction((tx) =>
              tx.updateJob({ ...job(id), kind: winner, version: 2, pollAttempts: i + 1 }, 1),
            ),
          ),
        );
        expect(updates.filter(Boolean)).toHaveLength(1);
        expect(await first.getJob(job(id))).toMatchObject({ version: 2, pollAttempts: updates[0] ? 1 : 2 });
      }
    });
  });
}
