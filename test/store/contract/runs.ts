import { describe, expect, it } from "vitest";
import { manualClock } from "../../../src/core/clock.js";
import { isFinalityError } from "../../../src/core/errors.js";
import type { Attempt, NewRunEvent, Run } from "../../../src/core/run-model.js";
import { RUNS_PROVIDER } from "../../../src/core/run-model.js";
import { finalityOn } from "../../../src/engine/finality.js";
import { createRunService, type RunService } from "../../../src/runs/run-service.js";
import type { Store } from "../../../src/store/store.js";
import { T0 } from "../../helpers/records.js";
import { type ContractScope, collectPages } from "./harness.js";

/** Later than any lease the cases take: every lease still held is due by then. */
const LATER = T0 + 10 * 365 * 24 * 3_600_000;

export function makeRun(id: string, overrides: Partial<Run> = {}): Run {
  return {
    id,
    kind: "render",
    status: "queued",
    version: 1,
    input: { frames: [1, 2], hdr: true, note: null },
    output: null,
    error: null,
    idempotencyKey: null,
    maxAttempts: 3,
    attemptCount: 0,
    generation: 0,
    currentAttemptId: null,
    cancelRequested: false,
    availableAt: T0,
    createdAt: T0,
    updatedAt: T0,
    settledAt: null,
    ...overrides,
  };
}

export function makeAttempt(runId: string, generation: number, overrides: Partial<Attempt> = {}): Attempt {
  return {
    id: `${runId}-g${generation}`,
    runId,
    workerId: "w1",
    generation,
    status: "claimed",
    lastSequence: null,
    leaseMs: 30_000,
    leaseExpiresAt: T0 + 30_000,
    version: 1,
    output: null,
    error: null,
    progress: { pct: 5 },
    claimedAt: T0,
    startedAt: null,
    heartbeatAt: null,
    endedAt: null,
    updatedAt: T0,
    ...overrides,
  };
}

const runEvent = (runId: string, n: number): NewRunEvent => ({
  dedupeKey: `${runId}:${n}`,
  runId,
  attemptId: null,
  actor: "api",
  type: `t${n}`,
  at: T0 + n,
  detail: { n },
});

const insertRuns = (store: Store, runs: Run[]) =>
  store.transaction(async (tx) => {
    for (const run of runs) if (!(await tx.insertRun(run))) throw new Error(`run ${run.id} exists`);
  });

const nonZero = (counts: Record<string, number>) =>
  Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));

/** The FinalityError code a promise rejects with, or "resolved". */
async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "resolved";
  } catch (error) {
    if (!isFinalityError(error)) throw error;
    return error.code;
  }
}

/** The RunStore port (src/store/run-store.ts): its methods, then the runs service over them. */
export function describeRuns(scope: ContractScope): void {
  describe("runs: the port", () => {
    it("stores a run unchanged; refuses a second run with its id or idempotency key", async () => {
      const store = scope.store();
      const run = makeRun("r1", { idempotencyKey: "k1" });
      const written = await store.transaction(async (tx) => [
        await tx.insertRun(run),
        await tx.insertRun({ ...run, idempotencyKey: null }),
        await tx.insertRun({ ...run, id: "r2" }),
      ]);
      expect(written).toEqual([true, false, false]);
      expect(await store.getRun("r1")).toEqual(run);
      expect(await store.getRun("r2")).toBeNull();
      expect(await store.transaction((tx) => tx.getRun("r1"))).toEqual(run);
      expect(await store.transaction((tx) => tx.getRunByIdempotencyKey("k1"))).toEqual(run);
      expect(await store.transaction((tx) => tx.getRunByIdempotencyKey("k2"))).toBeNull();
    });

    it("updateRun writes only over the expected version (compare-and-set)", async () => {
      const store = scope.store();
      const run = makeRun("r1");
      await insertRuns(store, [run]);
      const next = { ...run, status: "dispatching" as const, version: 2, output: [true, { a: 1 }] };
      const written = await store.transaction(async (tx) => [
        await tx.updateRun(next, 1),
        await tx.updateRun({ ...run, status: "failed", version: 2 }, 1),
        await tx.updateRun({ ...run, id: "missing", version: 2 }, 1),
      ]);
      expect(written).toEqual([true, false, false]);
      expect(await store.getRun("r1")).toEqual(next);
    });

    // Given the row as read (`previous`), a store may write only the columns that differ from it
    // (SQLite and PostgreSQL do): each changing column moved alone, then all at once, is read back
    // as written, the others untouched; a stale version with `previous` still writes nothing.
    it("updateRun and updateAttempt given the row as read: each column that moved is written, the rest kept", async () => {
      const store = scope.store();
      await insertRuns(store, [makeRun("r1")]);
      await store.transaction((tx) => tx.insertAttempt(makeAttempt("r1", 1)));
      const runMoves: Partial<Run>[] = [
        { status: "running" },
        { output: { frames: [3], ok: true } },
        { error: { code: "boom", retryable: false } },
        { maxAttempts: 5 },
        { attemptCount: 2 },
        { generation: 2 },
        { currentAttemptId: "r1-g1" },
        { cancelRequested: true },
        { availableAt: T0 + 7 },
        { updatedAt: T0 + 9 },
        { settledAt: T0 + 11 },
        { output: null, error: null, currentAttemptId: null, settledAt: null, status: "queued" },
      ];
      const attemptMoves: Partial<Attempt>[] = [
        { status: "running" },
        { lastSequence: 3 },
        { leaseMs: 5_000 },
        { leaseExpiresAt: null },
        { output: { done: [1, 2] } },
        { error: { code: "lost" } },
        { progress: { pct: 50 } },
        { startedAt: T0 + 1 },
        { heartbeatAt: T0 + 2 },
        { endedAt: T0 + 3 },
        { updatedAt: T0 + 4 },
        { lastSequence: null, progress: null, startedAt: null, leaseExpiresAt: T0 + 8 },
      ];
      for (const [i, move] of runMoves.entries()) {
        const end = i % 2 === 0 ? undefined : ("last" as const);
        await store.transaction(async (tx) => {
          const before = (await tx.getRun("r1")) as Run;
          const after = { ...before, ...move, version: before.version + 1 };
          expect(
            await tx.updateRun({ ...after, status: "failed" }, before.version - 1, undefined, before),
          ).toBe(false);
          expect(await tx.updateRun(after, before.version, end, before)).toBe(true);
        });
        const read = await store.getRun("r1");
        expect(read).toEqual({
          ...makeRun("r1"),
          ...Object.assign({}, ...runMoves.slice(0, i + 1)),
          version: i + 2,
        });
      }
      for (const [i, move] of attemptMoves.entries()) {
        const end = i % 2 === 0 ? undefined : ("last" as const);
        await store.transaction(async (tx) => {
          const before = (await tx.getAttempt("r1-g1")) as Attempt;
          const after = { ...before, ...move, version: before.version + 1 };
          expect(await tx.updateAttempt(after, before.version - 1, undefined, before)).toBe(false);
          expect(await tx.updateAttempt(after, before.version, end, before)).toBe(true);
        });
        const [read] = await store.runAttempts("r1");
        expect(read).toEqual({
          ...makeAttempt("r1", 1),
          ...Object.assign({}, ...attemptMoves.slice(0, i + 1)),
          version: i + 2,
        });
      }
      // Everything at once.
      await store.transaction(async (tx) => {
        const before = (await tx.getRun("r1")) as Run;
        const after = {
          ...before,
          ...Object.assign({}, ...runMoves.slice(0, -1)),
          version: before.version + 1,
        };
        expect(await tx.updateRun(after, before.version, undefined, before)).toBe(true);
      });
      expect(await store.getRun("r1")).toEqual({
        ...makeRun("r1"),
        ...Object.assign({}, ...runMoves.slice(0, -1)),
        version: runMoves.length + 2,
      });
    });

    it("pickClaimableRun: the oldest queued run of the kinds asked, not cancel-requested, available now", async () => {
      const store = scope.store();
      await insertRuns(store, [
        makeRun("cancelled", { cancelRequested: true }),
        makeRun("later", { availableAt: T0 + 1 }),
        makeRun("running", { status: "running" }),
        makeRun("email", { kind: "email" }),
        makeRun("render"),
      ]);
      const pick = (kinds: string[] | null, now = T0) =>
        store.transaction(async (tx) => (await tx.pickClaimableRun(kinds, now))?.id ?? null);
      expect(await pick(null)).toBe("email");
      expect(await pick(["render"])).toBe("render");
      expect(await pick(["render", "email", "render"])).toBe("email");
      expect(await pick([])).toBeNull();
      expect(await pick(["video"])).toBeNull();
      expect(await pick(null, T0 - 1)).toBeNull();
      expect(await pick(null, T0 + 1)).toBe("later");
    });

    it("attempts: unique by id and by (run, generation), CAS on version, listed by generation", async () => {
      const store = scope.store();
      await insertRuns(store, [makeRun("r1")]);
      const second = makeAttempt("r1", 2, { leaseExpiresAt: null, status: "released" });
      const first = makeAttempt("r1", 1);
      const written = await store.transaction(async (tx) => [
        await tx.insertAttempt(second),
        await tx.insertAttempt(first),
        await tx.insertAttempt({ ...first, generation: 3 }),
        await tx.insertAttempt({ ...first, id: "other" }),
      ]);
      expect(written).toEqual([true, true, false, false]);
      const started = {
        ...first,
        status: "running" as const,
        version: 2,
        startedAt: T0 + 5,
        lastSequence: 1,
      };
      const updated = await store.transaction(async (tx) => [
        await tx.updateAttempt(started, 1),
        await tx.updateAttempt({ ...first, status: "lost", version: 2 }, 1),
      ]);
      expect(updated).toEqual([true, false]);
      expect(await store.transaction((tx) => tx.getAttempt(first.id))).toEqual(started);
      expect(await store.transaction((tx) => tx.getAttempt("missing"))).toBeNull();
      expect(await store.runAttempts("r1")).toEqual([started, second]);
      expect(await store.runAttempts("r2")).toEqual([]);
    });

    it("getRunOfAttempt: the attempt's run, null for an attempt that does not exist", async () => {
      const store = scope.store();
      const run = makeRun("r1", { status: "dispatching", generation: 1, currentAttemptId: "r1-g1" });
      await insertRuns(store, [run, makeRun("r2")]);
      await store.transaction((tx) => tx.insertAttempt(makeAttempt("r1", 1)));
      const read = (attemptId: string) =>
        store.transaction(async (tx) =>
          Promise.all([tx.getAttempt(attemptId), tx.getRunOfAttempt(attemptId)]),
        );
      expect(await read("r1-g1")).toEqual([makeAttempt("r1", 1), run]);
      expect(await read("missing")).toEqual([null, null]);
    });

    // A write marked as its work's last (or sent beside it) may have its COMMIT sent before its
    // answer (PostgreSQL): a failed compare-and-set there must still fail the work, and commit none
    // of the writes sent with it.
    it("a last or beside write that loses its compare-and-set answers false and commits nothing beside it", async () => {
      const store = scope.store();
      const run = makeRun("r1");
      await insertRuns(store, [run]);
      await store.transaction((tx) => tx.insertAttempt(makeAttempt("r1", 1)));
      const stale = { ...run, status: "dispatching" as const, version: 2 };
      const staleAttempt = { ...makeAttempt("r1", 1), status: "running" as const, version: 2 };
      const lost = (what: string) => new Error(`${what}: lost the compare-and-set`);
      // Each work reads first, as the runs service's do: its writes then go out in a transaction
      // already open, where the COMMIT may go with them.
      const outcomes = await Promise.allSettled([
        store.transaction(async (tx) => {
          await tx.getRun("r1");
          const [written] = await Promise.all([
            tx.updateRun(stale, 7, "beside"),
            tx.appendRunEvent(runEvent("r1", 1), "last"),
          ]);
          if (!written) throw lost("the run");
        }),
        store.transaction(async (tx) => {
          await tx.getAttempt("r1-g1");
          const [, written] = await Promise.all([
            tx.appendRunEvent(runEvent("r1", 2), "beside"),
            tx.updateAttempt(staleAttempt, 7, "last"),
          ]);
          if (!written) throw lost("the attempt");
        }),
        store.transaction(async (tx) => {
          await tx.getRun("r1");
          const [written] = await Promise.all([
            tx.insertAttempt(makeAttempt("r1", 1, { id: "other" }), "beside"),
            tx.appendRunEvent(runEvent("r1", 3), "last"),
          ]);
          if (!written) throw lost("the insert");
        }),
      ]);
      expect(outcomes.map((o) => (o.status === "rejected" ? String(o.reason) : "committed"))).toEqual([
        "Error: the run: lost the compare-and-set",
        "Error: the attempt: lost the compare-and-set",
        "Error: the insert: lost the compare-and-set",
      ]);
      expect(await store.runEvents("r1")).toEqual([]);
      expect(await store.getRun("r1")).toEqual(run);
      expect(await store.runAttempts("r1")).toEqual([makeAttempt("r1", 1)]);
      // The same writes, winning: committed, each answered true.
      await store.transaction(async (tx) => {
        await tx.getRun("r1");
        const written = await Promise.all([
          tx.updateRun(stale, 1, "beside"),
          tx.updateAttempt(staleAttempt, 1, "beside"),
          tx.appendRunEvent(runEvent("r1", 1), "last"),
        ]);
        expect(written).toEqual([true, true, true]);
      });
      expect(await store.getRun("r1")).toEqual(stale);
      expect((await store.runEvents("r1")).map((e) => e.type)).toEqual(["t1"]);
    });

    it("a last event insert whose key is used answers false and commits nothing beside it", async () => {
      const store = scope.store();
      const run = makeRun("r1");
      await insertRuns(store, [run]);
      await store.transaction((tx) => tx.appendRunEvent(runEvent("r1", 1)));
      const outcome = store.transaction(async (tx) => {
        const [detail] = await Promise.all([tx.runEventDetail("r1:1"), tx.getRun("r1")]);
        const seen = detail !== null;
        const [, recorded] = await Promise.all([
          tx.updateRun({ ...run, status: "dispatching", version: 2 }, 1, "beside"),
          tx.appendRunEvent({ ...runEvent("r1", 1), type: "again" }, "last"),
        ]);
        if (!recorded) throw new Error(`recorded already (seen: ${seen})`);
      });
      await expect(outcome).rejects.toThrow("recorded already (seen: true)");
      expect(await store.getRun("r1")).toEqual(run);
      expect((await store.runEvents("r1")).map((e) => e.type)).toEqual(["t1"]);
      expect(await store.transaction((tx) => tx.runEventDetail("r1:2"))).toBeNull();
      // What a retried worker call reads back of its first: the event's detail, as written.
      expect(await store.transaction((tx) => tx.runEventDetail("r1:1"))).toEqual({ n: 1 });
      await store.transaction((tx) => tx.appendRunEvent({ ...runEvent("r1", 4), detail: null }));
      expect(await store.transaction((tx) => tx.runEventDetail("r1:4"))).toEqual({});
    });

    it("run events: deduped by key, read in the order written, paged by seqNo", async () => {
      const store = scope.store();
      const written = await store.transaction(async (tx) => [
        await tx.appendRunEvent(runEvent("r1", 1)),
        await tx.appendRunEvent({ ...runEvent("r1", 1), type: "again" }),
        await tx.appendRunEvent(runEvent("r2", 1)),
        await tx.appendRunEvent(runEvent("r1", 2)),
        await tx.appendRunEvent(runEvent("r1", 3)),
      ]);
      expect(written).toEqual([true, false, true, true, true]);
      const all = await store.runEvents("r1");
      expect(all.map(({ seqNo: _, ...rest }) => rest)).toEqual([1, 2, 3].map((n) => runEvent("r1", n)));
      expect(all.map((e) => e.seqNo)).toEqual([...all.map((e) => e.seqNo)].sort((a, b) => a - b));
      const [one, two] = all;
      expect((await store.runEvents("r1", { limit: 1 })).map((e) => e.type)).toEqual(["t1"]);
      expect((await store.runEvents("r1", { after: one?.seqNo })).map((e) => e.type)).toEqual(["t2", "t3"]);
      expect((await store.runEvents("r1", { after: two?.seqNo, limit: 5 })).map((e) => e.type)).toEqual([
        "t3",
      ]);
    });

    it("appendRunEvents: numbered in the order given; a used key anywhere in it answers false and writes none of it", async () => {
      const store = scope.store();
      const written = await store.transaction(async (tx) => [
        await tx.appendRunEvents([runEvent("r1", 2), runEvent("r2", 1), runEvent("r1", 1)]),
        await tx.appendRunEvents([]),
      ]);
      expect(written).toEqual([true, true]);
      // The order given, neither the keys' nor the times': r1's second event before its first, and
      // r2's between them.
      const r1 = await store.runEvents("r1");
      expect(r1.map(({ seqNo: _, ...rest }) => rest)).toEqual([runEvent("r1", 2), runEvent("r1", 1)]);
      const all = [...r1, ...(await store.runEvents("r2"))].sort((a, b) => a.seqNo - b.seqNo);
      expect(all.map((e) => e.dedupeKey)).toEqual(["r1:2", "r2:1", "r1:1"]);
      const refused = await store.transaction(async (tx) => [
        // The used key last: the events before it, written first, are taken back.
        await tx.appendRunEvents([runEvent("r1", 3), runEvent("r2", 2), runEvent("r1", 1)]),
        await tx.appendRunEvents([runEvent("r1", 1), runEvent("r1", 4)]),
        // A key twice in the batch itself.
        await tx.appendRunEvents([runEvent("r3", 1), runEvent("r3", 1)]),
        // The transaction goes on: what it writes next is kept.
        await tx.appendRunEvents([runEvent("r1", 5), runEvent("r3", 2)]),
      ]);
      expect(refused).toEqual([false, false, false, true]);
      expect((await store.runEvents("r1")).map((e) => e.type)).toEqual(["t2", "t1", "t5"]);
      expect((await store.runEvents("r2")).map((e) => e.type)).toEqual(["t1"]);
      expect((await store.runEvents("r3")).map((e) => e.type)).toEqual(["t2"]);
      // The keys taken back are free again.
      expect(
        await store.transaction((tx) => tx.appendRunEvents([runEvent("r1", 3), runEvent("r3", 1)])),
      ).toBe(true);
      expect((await store.runEvents("r3")).map((e) => e.type)).toEqual(["t2", "t1"]);
    });

    it("a last or beside appendRunEvents with a used key answers false and commits nothing beside it", async () => {
      const store = scope.store();
      const run = makeRun("r1");
      await insertRuns(store, [run]);
      await store.transaction((tx) => tx.appendRunEvent(runEvent("r1", 1)));
      const stale = { ...run, status: "dispatching" as const, version: 2 };
      // The events beside the run's write (the last), then as the last themselves; each work reads
      // first, so that its writes go out in an open transaction, where the COMMIT may go with them.
      const beside = store.transaction(async (tx) => {
        await tx.getRun("r1");
        const [recorded] = await Promise.all([
          tx.appendRunEvents([runEvent("r1", 2), runEvent("r1", 1)], "beside"),
          tx.updateRun(stale, 1, "last"),
        ]);
        if (!recorded) throw new Error("beside: recorded already");
      });
      await expect(beside).rejects.toThrow("beside: recorded already");
      const last = store.transaction(async (tx) => {
        await tx.getRun("r1");
        const [, recorded] = await Promise.all([
          tx.updateRun(stale, 1, "beside"),
          tx.appendRunEvents([runEvent("r1", 3), runEvent("r1", 1)], "last"),
        ]);
        if (!recorded) throw new Error("last: recorded already");
      });
      await expect(last).rejects.toThrow("last: recorded already");
      expect(await store.getRun("r1")).toEqual(run);
      expect((await store.runEvents("r1")).map((e) => e.type)).toEqual(["t1"]);
      // The same writes with new keys: committed, answered true, in the order given.
      await store.transaction(async (tx) => {
        await tx.getRun("r1");
        const written = await Promise.all([
          tx.updateRun(stale, 1, "beside"),
          tx.appendRunEvents([runEvent("r1", 3), runEvent("r1", 2)], "last"),
        ]);
        expect(written).toEqual([true, true]);
      });
      expect(await store.getRun("r1")).toEqual(stale);
      expect((await store.runEvents("r1")).map((e) => e.type)).toEqual(["t1", "t3", "t2"]);
    });

    it("dueLeases: expired leases soonest first, at most limit; an attempt that holds no lease never", async () => {
      const store = scope.store();
      expect(await store.dueLeases(LATER, 10)).toEqual([]);
      await insertRuns(store, [makeRun("r1"), makeRun("r2"), makeRun("r3")]);
      await store.transaction(async (tx) => {
        await tx.insertAttempt(makeAttempt("r1", 1, { leaseExpiresAt: T0 + 300 }));
        await tx.insertAttempt(makeAttempt("r2", 1, { leaseExpiresAt: T0 + 100 }));
        await tx.insertAttempt(makeAttempt("r3", 1, { leaseExpiresAt: null, status: "succeeded" }));
      });
      const due = (now: number, limit: number) => store.dueLeases(now, limit);
      expect(await due(T0 + 99, 10)).toEqual([]);
      expect(await due(T0 + 100, 10)).toEqual([
        { attemptId: "r2-g1", runId: "r2", leaseExpiresAt: T0 + 100 },
      ]);
      expect((await due(T0 + 1_000, 10)).map((l) => l.attemptId)).toEqual(["r2-g1", "r1-g1"]);
      expect((await due(T0 + 1_000, 1)).map((l) => l.attemptId)).toEqual(["r2-g1"]);
      expect((await due(LATER, 10)).map((l) => l.attemptId)).toEqual(["r2-g1", "r1-g1"]);
    });

    it("listRuns pages newest first, filtered by status and kind; runStats counts by status", async () => {
      const store = scope.store();
      const runs = Array.from({ length: 7 }, (_, i) =>
        makeRun(`r${i}`, { kind: i % 2 ? "email" : "render", status: i < 5 ? "queued" : "succeeded" }),
      );
      await insertRuns(store, runs);
      const { items, pages } = await collectPages((cursor) => store.listRuns({ limit: 3, cursor }));
      expect(pages).toBe(3);
      expect(items.map((r) => r.id)).toEqual(["r6", "r5", "r4", "r3", "r2", "r1", "r0"]);
      expect(items[6]).toEqual(runs[0]);
      expect((await store.listRuns({ status: "succeeded" })).items.map((r) => r.id)).toEqual(["r6", "r5"]);
      expect((await store.listRuns({ kind: "email", status: "queued" })).items.map((r) => r.id)).toEqual([
        "r3",
        "r1",
      ]);
      expect(await store.runStats()).toEqual({ queued: 5, succeeded: 2 });
    });
  });

  describe("runs: the service over the port", () => {
    function service(store: Store, options: { maxUnstartedReleases?: number } = {}) {
      const clock = manualClock(T0);
      const finality = finalityOn({ store, clock });
      const runs = createRunService({
        finality,
        random: () => 0.5,
        retry: { baseDelayMs: 1_000 },
        ...options,
      });
      return { runs, clock, finality };
    }
    const closing = async <T>(runs: RunService, work: () => Promise<T>): Promise<T> => {
      try {
        return await work();
      } finally {
        runs.close();
      }
    };

    it("enqueue once per key; claim fences by generation; heartbeat extends the lease; completion settles", async () => {
      const store = scope.store();
      const { runs, clock, finality } = service(store);
      await closing(runs, async () => {
        const first = await runs.enqueue({ kind: "render", input: { page: 1 }, idempotencyKey: "k1" });
        const again = await runs.enqueue({ kind: "render", input: { page: 1 }, idempotencyKey: "k1" });
        expect([first.created, again.created, again.run.id]).toEqual([true, false, first.run.id]);
        const claimed = await runs.claim({ workerId: "w1", kinds: ["render"], leaseSeconds: 10 });
        expect(claimed?.run).toMatchObject({ id: first.run.id, status: "dispatching", generation: 1 });
        expect(claimed?.attempt).toMatchObject({ generation: 1, leaseExpiresAt: T0 + 10_000 });
        expect(await runs.claim({ workerId: "w2" })).toBeNull();
        const attemptId = claimed?.attempt.id as string;
        clock.advance(5_000);
        const beat = await runs.heartbeat(attemptId, { generation: 1 });
        expect(beat.attempt).toMatchObject({ status: "starting", leaseExpiresAt: T0 + 15_000 });
        expect(await refusal(runs.heartbeat(attemptId, { generation: 2 }))).toBe("stale-generation");
        await runs.recordEvent(attemptId, { generation: 1, sequence: 1, type: "started" });
        const done = await runs.recordEvent(attemptId, {
          generation: 1,
          sequence: 2,
          type: "succeeded",
          output: { url: "s3://x" },
        });
        expect(done.run).toMatchObject({ status: "succeeded", output: { url: "s3://x" } });
        expect(await store.dueLeases(LATER, 10)).toEqual([]);
        expect(await finality.getJob({ provider: RUNS_PROVIDER, id: first.run.id })).toMatchObject({
          state: "succeeded",
          result: { url: "s3://x" },
        });
      });
    });

    // On PostgreSQL the enqueues share a group, each sending its run's insert beside the mirror
    // job's with the COMMIT behind them: a loser's insert fails there (FNL01), runs again the
    // ordinary way, and finds the winner's run by its key.
    it("enqueues racing with one idempotency key make one run and one mirror job; every one answers it", async () => {
      const store = scope.store();
      const { runs, finality } = service(store);
      await closing(runs, async () => {
        const answers = await Promise.all(
          Array.from({ length: 8 }, () => runs.enqueue({ kind: "render", idempotencyKey: "raced" })),
        );
        const ids = new Set(answers.map((a) => a.run.id));
        expect(ids.size).toBe(1);
        expect(answers.filter((a) => a.created)).toHaveLength(1);
        const [id] = [...ids] as [string];
        expect((await runs.listRuns({ limit: 50 })).items.map((r) => r.id)).toEqual([id]);
        expect(await finality.getJob({ provider: RUNS_PROVIDER, id })).toMatchObject({ state: "pending" });
        expect((await store.runEvents(id)).map((e) => e.type)).toEqual(["run.queued"]);
      });
    });

    it("a lease that runs out before start releases the run; the old attempt is fenced off", async () => {
      const store = scope.store();
      const { runs, clock } = service(store);
      await closing(runs, async () => {
        const { run } = await runs.enqueue({ kind: "render" });
        const first = await runs.claim({ workerId: "w1", leaseSeconds: 10 });
        clock.advance(9_999);
        expect(nonZero(await runs.sweepOnce())).toEqual({});
        clock.advance(1);
        expect(nonZero(await runs.sweepOnce())).toEqual({ unstarted_released: 1 });
        expect(await store.getRun(run.id)).toMatchObject({ status: "queued" });
        const second = await runs.claim({ workerId: "w2", leaseSeconds: 10 });
        expect(second?.attempt).toMatchObject({ generation: 2 });
        expect(await refusal(runs.heartbeat(first?.attempt.id as string, { generation: 1 }))).not.toBe(
          "resolved",
        );
        expect((await store.runAttempts(run.id)).map((a) => [a.generation, a.status])).toEqual([
          [1, "released"],
          [2, "claimed"],
        ]);
      });
    });

    it("a claim with start: the run is running when it answers, its started recorded with no sequence; its lease running out is a lost attempt", async () => {
      const store = scope.store();
      const { runs, clock, finality } = service(store);
      await closing(runs, async () => {
        const { run } = await runs.enqueue({ kind: "render" });
        const claimed = await runs.claim({ workerId: "w1", leaseSeconds: 10, start: true });
        expect(claimed?.run).toMatchObject({ id: run.id, status: "running", generation: 1, attemptCount: 1 });
        expect(claimed?.attempt).toMatchObject({ status: "running", lastSequence: null, startedAt: T0 });
        expect(await store.getRun(run.id)).toMatchObject({
          status: "running",
          version: claimed?.run.version,
        });
        expect((await store.runAttempts(run.id))[0]).toMatchObject({ status: "running", lastSequence: null });
        expect(await finality.getJob({ provider: RUNS_PROVIDER, id: run.id })).toMatchObject({
          state: "running",
        });
        expect(
          (await store.runEvents(run.id)).map((e) => [
            e.type,
            (e.detail as { sequence?: number }).sequence ?? null,
          ]),
        ).toEqual([
          ["run.queued", null],
          ["attempt.claimed", null],
          ["worker.started", null],
        ]);
        const attemptId = claimed?.attempt.id as string;
        // No sequence is the claim's: a worker that sends its own started 0 as well is heard
        // (it used to be answered `duplicate`, and so was a `succeeded` numbered 0: lost).
        const again = await runs.recordEvent(attemptId, { generation: 1, sequence: 0, type: "started" });
        expect(again).toMatchObject({ outcome: "applied", attempt: { status: "running", lastSequence: 0 } });
        const progress = await runs.recordEvent(attemptId, {
          generation: 1,
          sequence: 1,
          type: "progress",
          progress: { half: true },
        });
        expect(progress).toMatchObject({ outcome: "applied", attempt: { progress: { half: true } } });
        clock.advance(10_000);
        expect(nonZero(await runs.sweepOnce())).toEqual({ lost_retry: 1 });
        expect(await store.getRun(run.id)).toMatchObject({ status: "queued", attemptCount: 1 });
      });
    });

    it("after a claim with start, a worker that numbers its reports from 0 is heard: its succeeded 0 settles the run", async () => {
      const store = scope.store();
      const { runs } = service(store);
      await closing(runs, async () => {
        const { run } = await runs.enqueue({ kind: "render" });
        const claimed = await runs.claim({ workerId: "w1", start: true });
        const done = await runs.recordEvent(claimed?.attempt.id as string, {
          generation: 1,
          sequence: 0,
          type: "succeeded",
          output: { first: true },
        });
        expect(done).toMatchObject({
          outcome: "applied",
          run: { status: "succeeded", output: { first: true } },
        });
        expect(await store.getRun(run.id)).toMatchObject({ status: "succeeded" });
      });
    });

    it("cancel: a queued run at once, never claimed; a running one flagged until its worker acknowledges", async () => {
      const store = scope.store();
      const { runs } = service(store);
      await closing(runs, async () => {
        const queued = await runs.enqueue({ kind: "render" });
        expect((await runs.cancel(queued.run.id)).status).toBe("cancelled");
        expect(await runs.claim({ workerId: "w1" })).toBeNull();
        const running = await runs.enqueue({ kind: "render" });
        const claimed = await runs.claim({ workerId: "w1" });
        const attemptId = claimed?.attempt.id as string;
        await runs.recordEvent(attemptId, { generation: 1, sequence: 1, type: "started" });
        expect(await runs.cancel(running.run.id)).toMatchObject({ status: "running", cancelRequested: true });
        expect((await runs.heartbeat(attemptId, { generation: 1 })).run.cancelRequested).toBe(true);
        const ack = await runs.recordEvent(attemptId, { generation: 1, sequence: 2, type: "cancelled" });
        expect(ack.run.status).toBe("cancelled");
        expect(await refusal(runs.cancel("missing"))).toBe("not-found");
        expect((await runs.listRuns({ status: "cancelled" })).items.map((r) => r.id)).toEqual([
          running.run.id,
          queued.run.id,
        ]);
      });
    });
  });
}
