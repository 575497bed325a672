import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import type { NewRunEvent } from "../../src/core/run-model.js";
import { finalityOn } from "../../src/engine/finality.js";
import { createRunService, type RunService } from "../../src/runs/run-service.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { postgresSuite, useFreshSchema } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp-dir.js";
import { refusal } from "./engine-harness.js";
import { onEachPick, overTx } from "./pick-watch.js";

// A worker's end that claims its next run in the same call and transaction (`next`): one call
// per run instead of two. What it must keep: the end is recorded whatever the claim finds; a
// retried end (its first answer lost) answers the claim its first call made, never a new one;
// a client gone while it commits gets its next run given back.

const { admin } = await postgresSuite("a worker's end that claims the next run");

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The store, each batch of run events (`appendRunEvents`) given one more, last, whose key is used
 * already: the one `usedKey()` names, while it names one.
 */
function withUsedKeyInEvents(store: Store, usedKey: () => string | null): Store {
  return overTx(store, (tx) => ({
    appendRunEvents(events, end) {
      const key = usedKey();
      if (key === null) return tx.appendRunEvents(events, end);
      const used: NewRunEvent = {
        dedupeKey: key,
        runId: "elsewhere",
        attemptId: null,
        actor: "api",
        type: "used",
        at: 0,
        detail: null,
      };
      return tx.appendRunEvents([...events, used], end);
    },
  }));
}

const postgres = useFreshSchema(admin);
const stores: [string, () => Promise<Store>][] = [
  [
    "SQLite",
    async () => {
      const dir = tempDir("finality-next-");
      cleanups.push(() => dir.cleanup());
      const store = createSqliteStore({ path: dir.file("ledger.db") });
      cleanups.push(() => store.close());
      return store;
    },
  ],
  ["PostgreSQL", () => postgres.open()],
];

describe.each(stores)("a worker's end with `next` (%s)", (_name, openStore) => {
  async function open(wrap: (store: Store) => Store = (store) => store) {
    const store = await openStore();
    const clock = manualClock();
    const runs: RunService = createRunService({ finality: finalityOn({ store: wrap(store), clock }) });
    cleanups.push(() => runs.close());
    return { store, clock, runs };
  }

  /** The events of both runs, in the order written across them: `<which run> <type>`. */
  async function writtenAcross(store: Store, firstId: string, nextId: string) {
    const events = [...(await store.runEvents(firstId)), ...(await store.runEvents(nextId))];
    return events
      .sort((a, b) => a.seqNo - b.seqNo)
      .map((event) => `${event.runId === firstId ? "first" : "next"} ${event.type}`);
  }

  async function claimFirst(runs: RunService, kinds = ["render"]) {
    const claimed = await runs.claim({ workerId: "w1", kinds, start: true, leaseSeconds: 30 });
    if (claimed === null) throw new Error("nothing to claim");
    return claimed.attempt;
  }

  it("claims the same worker's next run in the end's transaction; the end's event names it", async () => {
    const { store, runs } = await open();
    const first = await runs.enqueue({ kind: "render", input: { n: 1 } });
    const second = await runs.enqueue({ kind: "render", input: { n: 2 } });
    const attempt = await claimFirst(runs);
    const ended = await runs.recordEvent(
      attempt.id,
      { generation: attempt.generation, sequence: 1, type: "succeeded", output: { ok: 1 } },
      null,
      { start: true, leaseSeconds: 20 },
    );
    expect(ended.outcome).toBe("applied");
    expect(ended.run).toMatchObject({ id: first.run.id, status: "succeeded" });
    expect(ended.next?.run).toMatchObject({ id: second.run.id, status: "running", input: { n: 2 } });
    expect(ended.next?.attempt).toMatchObject({ workerId: "w1", status: "running", leaseMs: 20_000 });
    expect(await store.getRun(second.run.id)).toMatchObject({ status: "running", attemptCount: 1 });
    expect((await store.runAttempts(second.run.id)).map((a) => a.id)).toEqual([ended.next?.attempt.id]);
    const endEvent = (await store.runEvents(first.run.id)).find((e) => e.type === "worker.succeeded");
    expect(endEvent?.detail).toMatchObject({ applied: true, nextAttemptId: ended.next?.attempt.id });
    // Written in one statement, the end's event first: the trail reads the end, then the next claim.
    expect((await writtenAcross(store, first.run.id, second.run.id)).slice(-3)).toEqual([
      "first worker.succeeded",
      "next attempt.claimed",
      "next worker.started",
    ]);
    expect(await store.getJob({ provider: "runs", id: first.run.id })).toMatchObject({ state: "succeeded" });
    expect(await store.getJob({ provider: "runs", id: second.run.id })).toMatchObject({ state: "running" });
  });

  it("without `start` the next run is dispatched, not running; kinds bound what it takes", async () => {
    const { store, runs } = await open();
    const first = await runs.enqueue({ kind: "render" });
    const other = await runs.enqueue({ kind: "other" });
    await runs.enqueue({ kind: "render" });
    const attempt = await claimFirst(runs);
    const ended = await runs.recordEvent(
      attempt.id,
      { generation: attempt.generation, sequence: 1, type: "failed", error: { retryable: false } },
      null,
      { kinds: ["other"] },
    );
    expect(ended.run.status).toBe("failed");
    expect(ended.next?.run).toMatchObject({ id: other.run.id, status: "dispatching" });
    expect(ended.next?.attempt.status).toBe("claimed");
    expect((await writtenAcross(store, first.run.id, other.run.id)).slice(-2)).toEqual([
      "first worker.failed",
      "next attempt.claimed",
    ]);
  });

  it("nothing to claim: the end is recorded and `next` is null", async () => {
    const { store, runs } = await open();
    const { run } = await runs.enqueue({ kind: "render" });
    const attempt = await claimFirst(runs);
    const ended = await runs.recordEvent(
      attempt.id,
      { generation: attempt.generation, sequence: 1, type: "cancelled" },
      null,
      { start: true },
    );
    expect(ended).toMatchObject({ outcome: "applied", next: null });
    expect(await store.getRun(run.id)).toMatchObject({ status: "cancelled" });
    const endEvent = (await store.runEvents(run.id)).find((e) => e.type === "worker.cancelled");
    expect(endEvent?.detail).not.toHaveProperty("nextAttemptId");
  });

  it("a retried end answers the claim its first call made while it holds, then null; it never claims anew", async () => {
    const { store, clock, runs } = await open();
    await runs.enqueue({ kind: "render" });
    const second = await runs.enqueue({ kind: "render" });
    const third = await runs.enqueue({ kind: "render" });
    const attempt = await claimFirst(runs);
    const end = { generation: attempt.generation, sequence: 2, type: "succeeded" as const };
    const first = await runs.recordEvent(attempt.id, end, null, { start: true, leaseSeconds: 10 });
    expect(first.next?.run.id).toBe(second.run.id);
    // The answer was lost: the worker sends the same end again.
    const again = await runs.recordEvent(attempt.id, end, null, { start: true, leaseSeconds: 10 });
    expect(again.outcome).toBe("duplicate");
    expect(again.next?.attempt.id).toBe(first.next?.attempt.id);
    expect(again.next?.run).toMatchObject({ id: second.run.id, status: "running" });
    expect(await store.getRun(third.run.id)).toMatchObject({ status: "queued", attemptCount: 0 });
    // Once that lease has run out, a retry answers null and still claims nothing.
    clock.advance(10_000);
    const late = await runs.recordEvent(attempt.id, end, null, { start: true });
    expect(late).toMatchObject({ outcome: "duplicate", next: null });
    expect(await store.getRun(third.run.id)).toMatchObject({ status: "queued", attemptCount: 0 });
    // A retry without `next` answers as before, with no `next` at all.
    expect(await runs.recordEvent(attempt.id, end)).not.toHaveProperty("next");
  });

  it.each([false, true])(
    "an end whose events meet a used key runs again whole: no claim commits without its events (start %s)",
    async (start) => {
      // Inside the end's transaction only: its first two tries' events are refused whole (on
      // PostgreSQL the first, checked as the COMMIT goes out behind it, fails the transaction; the
      // ordinary try after it answers false), and the end runs again each time.
      let refusals = 0;
      let usedKey = "";
      const refused = () => {
        if (refusals === 0) return null;
        refusals--;
        return usedKey;
      };
      const { store, runs } = await open((s) => withUsedKeyInEvents(s, refused));
      const first = await runs.enqueue({ kind: "render" });
      const second = await runs.enqueue({ kind: "render" });
      const attempt = await claimFirst(runs);
      usedKey = `run:${first.run.id}:queued`;
      refusals = 2;
      const ended = await runs.recordEvent(
        attempt.id,
        { generation: attempt.generation, sequence: 1, type: "succeeded" },
        null,
        { start },
      );
      expect(refusals).toBe(0);
      expect(ended.outcome).toBe("applied");
      expect(ended.next?.run.id).toBe(second.run.id);
      expect((await store.runEvents(first.run.id)).map((e) => e.type)).toEqual([
        "run.queued",
        "attempt.claimed",
        "worker.started",
        "worker.succeeded",
      ]);
      expect((await store.runEvents(second.run.id)).map((e) => e.type)).toEqual(
        start ? ["run.queued", "attempt.claimed", "worker.started"] : ["run.queued", "attempt.claimed"],
      );
      expect((await store.runAttempts(second.run.id)).map((a) => a.id)).toEqual([ended.next?.attempt.id]);
    },
  );

  it("an end out of order still claims the next run (the attempt is over either way)", async () => {
    const { runs } = await open();
    await runs.enqueue({ kind: "render" });
    const second = await runs.enqueue({ kind: "render" });
    const attempt = await claimFirst(runs);
    await runs.recordEvent(attempt.id, { generation: attempt.generation, sequence: 1, type: "succeeded" });
    const late = await runs.recordEvent(
      attempt.id,
      { generation: attempt.generation, sequence: 2, type: "failed" },
      null,
      {},
    );
    expect(late.outcome).toBe("out_of_order");
    expect(late.run.status).toBe("succeeded");
    expect(late.next?.run.id).toBe(second.run.id);
  });

  it("only an end may ask for `next`; a fenced-off end claims nothing", async () => {
    const { store, runs } = await open();
    const { run } = await runs.enqueue({ kind: "render" });
    const queued = await runs.enqueue({ kind: "render" });
    const attempt = await claimFirst(runs);
    const progress = { generation: attempt.generation, sequence: 1, type: "progress" as const };
    expect(await refusal(runs.recordEvent(attempt.id, progress, null, {}))).toBe("invalid-request");
    expect((await store.runEvents(run.id)).map((e) => e.type)).not.toContain("worker.progress");
    const stale = { generation: attempt.generation + 1, sequence: 1, type: "succeeded" as const };
    expect(await refusal(runs.recordEvent(attempt.id, stale, null, {}))).toBe(
      "stale-generation:stale-generation",
    );
    expect(await store.getRun(queued.run.id)).toMatchObject({ status: "queued", attemptCount: 0 });
  });

  it.each([false, true])(
    "a client gone while the end commits: the end stays, the next run is given back (start %s)",
    async (start) => {
      const controller = new AbortController();
      let picks = 0;
      // The first pick is the first claim's; the second, inside the end's transaction, is where
      // the client leaves.
      const { store, runs } = await open((s) => onEachPick(s, () => ++picks === 2 && controller.abort()));
      const { run } = await runs.enqueue({ kind: "render" });
      const queued = await runs.enqueue({ kind: "render" });
      const attempt = await claimFirst(runs);
      const ended = await runs.recordEvent(
        attempt.id,
        { generation: attempt.generation, sequence: 1, type: "succeeded" },
        null,
        { start, signal: controller.signal },
      );
      expect(ended).toMatchObject({ outcome: "applied", next: null });
      expect(await store.getRun(run.id)).toMatchObject({ status: "succeeded" });
      expect(await store.getRun(queued.run.id)).toMatchObject({ status: "queued", attemptCount: 0 });
      expect((await store.runAttempts(queued.run.id)).map((a) => a.status)).toEqual(["released"]);
      // An end whose client has already gone claims nothing at all.
      const next = await runs.claim({ workerId: "w2", start: true });
      expect(next?.run.id).toBe(queued.run.id);
      const gone = new AbortController();
      gone.abort();
      const late = await runs.recordEvent(
        next?.attempt.id as string,
        { generation: next?.attempt.generation as number, sequence: 1, type: "succeeded" },
        null,
        { signal: gone.signal },
      );
      expect(late).toMatchObject({ outcome: "applied", next: null });
      expect(picks).toBe(3);
    },
  );
});
