import { describe, expect, it } from "vitest";
import { makeEffect, makeJob, T0 } from "../../helpers/records.js";
import { type ContractScope, insertEffects, insertJobs } from "./harness.js";

export function describeStats(scope: ContractScope): void {
  describe("stats", () => {
    it("counts jobs by state and effects by status through inserts, updates, rollbacks and prunes", async () => {
      const store = scope.store();
      const states = { pending: 5, running: 3, succeeded: 4, failed: 2 } as const;
      const jobs = Object.entries(states).flatMap(([state, count]) =>
        Array.from({ length: count }, (_, i) =>
          makeJob({
            id: `${state}-${i}`,
            state: state as keyof typeof states,
            settledAt: state === "pending" || state === "running" ? null : T0 - 10_000,
          }),
        ),
      );
      await insertJobs(store, jobs);
      expect((await store.stats(T0)).jobsByState).toEqual({
        pending: 5,
        running: 3,
        succeeded: 4,
        failed: 2,
      });

      // running-0 settles, pending-0 starts; an update that keeps the state changes no count.
      const byId = new Map(jobs.map((job) => [job.id, job]));
      const at = (id: string) => byId.get(id) as (typeof jobs)[number];
      await store.transaction(async (tx) => {
        expect(
          await tx.updateJob(
            { ...at("running-0"), state: "succeeded", version: 2, settledAt: T0, nextCheckAt: null },
            1,
          ),
        ).toBe(true);
        expect(await tx.updateJob({ ...at("pending-0"), state: "running", version: 2 }, 1)).toBe(true);
        expect(await tx.updateJob({ ...at("running-1"), pollAttempts: 3, version: 2 }, 1)).toBe(true);
      });
      const afterUpdates = { pending: 4, running: 3, succeeded: 5, failed: 2 };
      expect((await store.stats(T0)).jobsByState).toEqual(afterUpdates);

      // A transaction that throws leaves the counts as they were.
      await expect(
        store.transaction(async (tx) => {
          await tx.insertJob(makeJob({ id: "rolled-back", state: "cancelled" }));
          await tx.updateJob({ ...at("pending-1"), state: "failed", version: 2 }, 1);
          throw new Error("roll back");
        }),
      ).rejects.toThrow("roll back");
      expect((await store.stats(T0)).jobsByState).toEqual(afterUpdates);

      await insertEffects(store, [
        makeEffect({ jobId: "succeeded-0", id: "e-pending" }),
        makeEffect({ jobId: "succeeded-1", id: "e-delivered" }),
        makeEffect({ jobId: "succeeded-2", id: "e-dead" }),
      ]);
      await store.transaction(async (tx) => {
        const delivered = await tx.getEffect("e-delivered");
        const dead = await tx.getEffect("e-dead");
        if (delivered === null || dead === null) throw new Error("effects not stored");
        await tx.updateEffect({ ...delivered, status: "delivered", deliveredAt: T0 - 5_000 });
        await tx.updateEffect({ ...dead, status: "dead", lastError: "gone" });
      });
      expect((await store.stats(T0)).effectsByStatus).toEqual({ pending: 1, delivered: 1, dead: 1 });

      // Pruning removes the delivered effect, then the jobs settled before T0 without open effects:
      // succeeded-1 and -3, failed-0 and -1 (succeeded-0 and -2 keep theirs; running-0 settled at
      // T0). Counts follow, and a state at zero is left out.
      expect(await store.prune("deliveredEffects", T0, 100)).toBe(1);
      expect(await store.prune("settledJobs", T0, 100)).toBe(4);
      const stats = await store.stats(T0);
      expect(stats.effectsByStatus).toEqual({ pending: 1, dead: 1 });
      expect(stats.jobsByState).toEqual({ pending: 4, running: 3, succeeded: 3 });
      expect(stats.openJobs).toBe(7);
      // Open jobs are first due 90 s after T0 (makeJob): the count follows the time asked about.
      expect(stats.dueJobs).toBe(0);
      expect((await store.stats(T0 + 90_000)).dueJobs).toBe(7);
    });
  });
}
