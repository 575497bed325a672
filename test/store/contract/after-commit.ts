import { describe, expect, it } from "vitest";
import { FinalityError } from "../../../src/core/errors.js";
import type { Job } from "../../../src/core/model.js";
import { jobLockOrder } from "../../../src/store/store.js";
import { makeJob } from "../../helpers/records.js";
import type { ContractScope } from "./harness.js";

const job = (id: string) => makeJob({ provider: "generic", id });

export function describeAfterCommit(scope: ContractScope): void {
  describe("afterCommit", () => {
    it("runs its callbacks once committed, in order of registration, before the transaction resolves", async () => {
      const store = scope.store();
      const log: string[] = [];
      // Started inside the callback: a read outside the transaction, which sees the job only
      // once it is committed (on a group commit, once the group's COMMIT has returned).
      let seen: Promise<Job | null> | null = null;
      const value = await store.transaction(async (tx) => {
        await tx.insertJob(job("a"));
        tx.afterCommit(() => {
          log.push("first");
          seen = store.getJob(job("a"));
        });
        tx.afterCommit(() => log.push("second"));
        tx.afterCommit(() => log.push("third"));
        log.push("work done");
        return "value";
      });
      log.push("resolved");
      expect(value).toBe("value");
      expect(log).toEqual(["work done", "first", "second", "third", "resolved"]);
      expect(await seen).toEqual(job("a"));
    });

    it("never runs a callback of a work that threw, nor of a run rolled back and re-run", async () => {
      const store = scope.store();
      const log: string[] = [];
      await expect(
        store.transaction(async (tx) => {
          await tx.insertJob(job("b"));
          tx.afterCommit(() => log.push("thrown"));
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      let runs = 0;
      await store.transaction(async (tx) => {
        runs += 1;
        tx.afterCommit(() => log.push(`run ${runs}`));
        if (runs === 1) throw new FinalityError("version-conflict", "raced");
      });
      expect(runs).toBe(2);
      expect(log).toEqual(["run 2"]);
      expect(await store.getJob(job("b"))).toBeNull();
    });

    it("concurrent callers: each committed work's callbacks run once, a failed one's never", async () => {
      const store = scope.store();
      const ran: string[] = [];
      // With lock orders, so that adapters with group commit may put the three in one group.
      const write = (id: string, fail: boolean) =>
        store.transaction(
          async (tx) => {
            await tx.insertJob(job(id));
            tx.afterCommit(() => ran.push(id));
            if (fail) throw new Error(`failed ${id}`);
          },
          { lockOrder: jobLockOrder(job(id)) },
        );
      const outcomes = await Promise.allSettled([write("c1", false), write("c2", true), write("c3", false)]);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect(ran.sort()).toEqual(["c1", "c3"]);
      expect(await store.getJob(job("c2"))).toBeNull();
    });

    it("a throwing callback: the others still run and the committed transaction rejects with its error", async () => {
      const store = scope.store();
      const log: string[] = [];
      const outcome = store.transaction(async (tx) => {
        await tx.insertJob(job("d"));
        tx.afterCommit(() => log.push("before"));
        tx.afterCommit(() => {
          throw new Error("listener failed");
        });
        tx.afterCommit(() => log.push("after"));
      });
      await expect(outcome).rejects.toThrow("listener failed");
      expect(log).toEqual(["before", "after"]);
      expect(await store.getJob(job("d"))).toEqual(job("d"));
    });
  });
}
