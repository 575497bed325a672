import { describe, expect, it } from "vitest";
import { isFinalityError } from "../../../src/core/errors.js";
import type { Job } from "../../../src/core/model.js";
import type { SettlementPage } from "../../../src/store/settlement-feed.js";
import type { Store } from "../../../src/store/store.js";
import { makeJob, T0 } from "../../helpers/records.js";
import { type ContractScope, insertJobs } from "./harness.js";
import { describeSettlementFilters } from "./settlement-filters.js";

const settle = (job: Job, at: number): Job => ({
  ...job,
  state: "succeeded",
  version: job.version + 1,
  settledAt: at,
  settledBy: "reconcile",
  nextCheckAt: null,
  result: { ok: job.id },
});

async function settleStored(store: Store, id: string, at: number): Promise<void> {
  await store.transaction(async (tx) => {
    const job = await tx.getJob({ provider: "generic", id });
    if (job === null || !(await tx.updateJob(settle(job, at), job.version)))
      throw new Error(`cannot settle ${id}`);
  });
}

const keys = (page: SettlementPage) => page.items.map((s) => `${s.provider}/${s.id}`);

/** Every settlement, following cursors, `limit` at a time. */
async function readAll(store: Store, limit: number, filter: { provider?: string; kind?: string } = {}) {
  const seen: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.readSettlements({ ...filter, after, limit });
    if (page.items.length === 0) return seen;
    seen.push(...keys(page));
    after = page.cursor ?? undefined;
  }
}

export function describeSettlements(scope: ContractScope): void {
  describeSettlementFilters(scope);
  describe("settlement feed", () => {
    it("has one row per first terminal state, in commit order, written with the job", async () => {
      const store = scope.store();
      expect(await store.readSettlements({})).toEqual({ items: [], cursor: null });
      await insertJobs(store, [makeJob({ id: "open-1" }), makeJob({ id: "open-2" })]);
      await insertJobs(store, [makeJob({ id: "born-settled", state: "failed", kind: "image" })]);
      await settleStored(store, "open-2", T0 + 5);
      await settleStored(store, "open-1", T0 + 9);
      // A settled job written again (a later observation, a flag) is not a new settlement.
      await store.transaction(async (tx) => {
        const job = await tx.getJob({ provider: "generic", id: "open-2" });
        if (job === null) throw new Error("gone");
        await tx.updateJob({ ...job, version: job.version + 1, conflict: true }, job.version);
      });
      // A rolled-back settlement leaves no row.
      await insertJobs(store, [makeJob({ id: "rolled-back" })]);
      await expect(
        store.transaction(async (tx) => {
          const job = await tx.getJob({ provider: "generic", id: "rolled-back" });
          if (job) await tx.updateJob(settle(job, T0 + 20), job.version);
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");

      const page = await store.readSettlements({});
      expect(keys(page)).toEqual(["generic/born-settled", "generic/open-2", "generic/open-1"]);
      const [born, second, third] = page.items;
      expect(born).toMatchObject({ kind: "image", state: "failed", settledAt: T0, settledBy: "webhook" });
      expect(second).toMatchObject({
        kind: null,
        state: "succeeded",
        settledAt: T0 + 5,
        settledBy: "reconcile",
      });
      expect(second?.job).toMatchObject({ id: "open-2", conflict: true, result: { ok: "open-2" } });
      expect(page.cursor).toBe(third?.cursor);
      const cursors = page.items.map((s) => s.cursor);
      expect(new Set(cursors).size).toBe(3);
    });

    it("pages from a cursor: nothing seen twice, nothing missed; an empty page keeps the cursor", async () => {
      const store = scope.store();
      const ids = Array.from({ length: 7 }, (_, i) => `job-${i}`);
      for (const id of ids) await insertJobs(store, [makeJob({ id, state: "succeeded" })]);
      expect(await readAll(store, 3)).toEqual(ids.map((id) => `generic/${id}`));
      const all = await store.readSettlements({});
      const last = all.cursor ?? "";
      expect(await store.readSettlements({ after: last })).toEqual({ items: [], cursor: last });
      const middle = all.items[3]?.cursor;
      expect(keys(await store.readSettlements({ after: middle, limit: 2 }))).toEqual([
        "generic/job-4",
        "generic/job-5",
      ]);
      // The same cursor reads the same items again: it is stable.
      expect(keys(await store.readSettlements({ after: middle, limit: 2 }))).toEqual([
        "generic/job-4",
        "generic/job-5",
      ]);
    });

    it("filters by provider and by the kind the job had when it settled", async () => {
      const store = scope.store();
      await insertJobs(store, [
        makeJob({ id: "a", state: "succeeded", kind: "image" }),
        makeJob({ id: "b", provider: "acme", state: "failed", kind: "text" }),
        makeJob({ id: "c", state: "cancelled", kind: "text" }),
      ]);
      expect(await readAll(store, 1, { provider: "acme" })).toEqual(["acme/b"]);
      expect(await readAll(store, 1, { kind: "text" })).toEqual(["acme/b", "generic/c"]);
      expect(await readAll(store, 5, { provider: "generic", kind: "text" })).toEqual(["generic/c"]);
    });

    it("refuses a cursor it did not give", async () => {
      const store = scope.store();
      for (const after of ["not-a-cursor", "-1", "MA"]) {
        const refused = await store.readSettlements({ after }).catch((error: unknown) => error);
        expect(isFinalityError(refused, "invalid-request"), after).toBe(true);
      }
    });

    it("wakes a waiter when a settlement commits", async () => {
      const store = scope.store();
      const before = await store.readSettlements({});
      const woken = store.settlementCommitted();
      await insertJobs(store, [makeJob({ id: "waited-for", state: "succeeded" })]);
      await woken;
      expect(keys(await store.readSettlements({ after: before.cursor ?? undefined }))).toEqual([
        "generic/waited-for",
      ]);
    });

    it("wakes a waiter when another instance on the same database commits a settlement", async () => {
      const first = scope.store();
      const openSecond = scope.fixture().openSecond;
      if (!openSecond) return;
      const second = scope.track(await openSecond());
      await first.readSettlements({});
      const woken = first.settlementCommitted();
      await insertJobs(second, [makeJob({ id: "elsewhere", state: "succeeded" })]);
      await woken;
      expect(keys(await first.readSettlements({}))).toEqual(["generic/elsewhere"]);
    });

    it("retention prunes the oldest settlements; the others keep their cursors", async () => {
      const store = scope.store();
      const DAY = 86_400_000;
      await insertJobs(store, [
        makeJob({ id: "old", state: "succeeded", settledAt: T0 }),
        makeJob({ id: "new", state: "succeeded", settledAt: T0 + 3 * DAY }),
      ]);
      const before = await store.readSettlements({});
      expect(await store.countPrunable("settlements", T0 + DAY)).toBe(1);
      expect((await store.housekeepingStats()).oldest.settlements).toBe(T0);
      expect(await store.prune("settlements", T0 + DAY, 500)).toBe(1);
      const after = await store.readSettlements({});
      expect(after.items.map((s) => [s.id, s.cursor])).toEqual([["new", before.items[1]?.cursor]]);
      // The job itself is not retention's settlements target: it stays.
      expect(await store.getJob({ provider: "generic", id: "old" })).not.toBeNull();
    });

    it("an aborted wait resolves, and a wait after close does not hang", async () => {
      const store = scope.store();
      const abort = new AbortController();
      const waiting = store.settlementCommitted(abort.signal);
      abort.abort();
      await waiting;
      const already = new AbortController();
      already.abort();
      await store.settlementCommitted(already.signal);
    });
  });
}
