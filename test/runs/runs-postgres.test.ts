import { describe, expect, it } from "vitest";
import { countingProxy } from "../../bench/lib/counting-proxy.js";
import { manualClock } from "../../src/core/clock.js";
import { LEASE_EXPIRED_BEFORE_START_CODE } from "../../src/core/run-model.js";
import { finalityOn } from "../../src/engine/finality.js";
import { createRunService } from "../../src/runs/run-service.js";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { POSTGRES_TEST_URL, postgresSuite, useFreshSchema } from "../helpers/postgres.js";
import { onEachPick, overTx } from "./pick-watch.js";

// The two run fixes of issue 15 on PostgreSQL, where a claim's transaction does real I/O and a
// client can leave while it commits: a withdrawn claim, and the bound on releases before start.
const { admin } = await postgresSuite("runs on PostgreSQL: withdrawn claims, releases before start");

describe("runs on PostgreSQL", () => {
  const { open, schema } = useFreshSchema(admin);

  /** A migrated store, and a second one on the same schema whose statements a proxy counts. */
  async function throughCountingProxy() {
    const migrated = await open();
    const target = new URL(POSTGRES_TEST_URL);
    const proxy = await countingProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const store = await openPostgresStore({
      url: proxy.url(POSTGRES_TEST_URL),
      schema: schema(),
      migrate: false,
    });
    return { migrated, proxy, store };
  }

  /**
   * Two runs queued and the first claimed (with start) by w1; `end()` sends its `succeeded`
   * asking for the next run (`next`, with start), counted by the proxy after `before(first run's id)`.
   */
  async function endThatClaimsNext(before: (firstRunId: string) => Promise<unknown> = async () => {}) {
    const { migrated, proxy, store } = await throughCountingProxy();
    const runs = createRunService({ finality: finalityOn({ store }) });
    const close = async () => {
      runs.close();
      await store.close();
      await proxy.close();
    };
    try {
      const first = await runs.enqueue({ kind: "render" });
      const second = await runs.enqueue({ kind: "render" });
      const claimed = await runs.claim({ workerId: "w1", start: true });
      const attempt = claimed?.attempt as NonNullable<typeof claimed>["attempt"];
      await before(first.run.id);
      proxy.start();
      const ended = await runs.recordEvent(
        attempt.id,
        { generation: attempt.generation, sequence: 1, type: "succeeded" },
        null,
        { start: true },
      );
      return { migrated, first, second, ended, counts: proxy.stop(), close };
    } catch (error) {
      await close();
      throw error;
    }
  }

  it.each([false, true])(
    "a claim (start %s) whose client leaves while it commits is withdrawn; the next worker gets the run",
    async (start) => {
      const controller = new AbortController();
      const store = onEachPick(await open(), () => controller.abort());
      const finality = finalityOn({ store });
      const runs = createRunService({ finality });
      try {
        const { run } = await runs.enqueue({ kind: "render" });
        expect(
          await runs.claim({ workerId: "w1", waitSeconds: 5, start, signal: controller.signal }),
        ).toBeNull();
        expect(await store.getRun(run.id)).toMatchObject({ status: "queued", attemptCount: 0 });
        expect((await store.runAttempts(run.id)).map((a) => a.status)).toEqual(["released"]);
        expect((await runs.claim({ workerId: "w2" }))?.run.id).toBe(run.id);
      } finally {
        runs.close();
      }
    },
  );

  it("a run released before start maxUnstartedReleases times ends lost at the next expiry", async () => {
    const store = await open();
    const clock = manualClock();
    const finality = finalityOn({ store, clock });
    const runs = createRunService({ finality, maxUnstartedReleases: 2 });
    try {
      const { run } = await runs.enqueue({ kind: "render" });
      const outcomes: string[] = [];
      for (let i = 0; i < 3; i++) {
        expect(await runs.claim({ workerId: `w${i}`, leaseSeconds: 10 })).not.toBeNull();
        clock.advance(10_000);
        const counts = await runs.sweepOnce();
        outcomes.push(...Object.entries(counts).flatMap(([outcome, n]) => Array(n).fill(outcome)));
      }
      expect(outcomes).toEqual(["unstarted_released", "unstarted_released", "unstarted_lost"]);
      expect(await store.getRun(run.id)).toMatchObject({
        status: "lost",
        error: { code: LEASE_EXPIRED_BEFORE_START_CODE },
      });
      expect(await store.getJob({ provider: "runs", id: run.id })).toMatchObject({ state: "lost" });
    } finally {
      runs.close();
    }
  });

  it("a claim costs 2 round trips (BEGIN with the pick; the writes with the COMMIT); a heartbeat 2, a completion 2", async () => {
    const { migrated, proxy, store } = await throughCountingProxy();
    const finality = finalityOn({ store });
    const runs = createRunService({ finality });
    try {
      await runs.enqueue({ kind: "render" });
      proxy.start();
      const claimed = await runs.claim({ workerId: "w1" });
      const counts = proxy.stop();
      expect(claimed?.attempt.status).toBe("claimed");
      expect((await migrated.getRun(claimed?.run.id as string))?.status).toBe("dispatching");
      // BEGIN with the pick (sorting ruled out first: SET LOCAL); three writes, the deadline check
      // (finality_before) and the COMMIT behind them. One after another they were 6 round trips,
      // then 3 with the COMMIT waiting.
      expect(counts).toEqual({ statements: 8, roundTrips: 2 });
      const attempt = claimed?.attempt as NonNullable<typeof claimed>["attempt"];
      proxy.start();
      await runs.heartbeat(attempt.id, { generation: attempt.generation });
      // BEGIN with the attempt's and the run's reads; the attempt's write with its event, the
      // deadline check and the COMMIT (4 round trips before).
      expect(proxy.stop()).toEqual({ statements: 7, roundTrips: 2 });
      proxy.start();
      const done = await runs.recordEvent(attempt.id, {
        generation: attempt.generation,
        sequence: 1,
        type: "succeeded",
        output: { ok: true },
      });
      // BEGIN with the attempt's and the run's reads and the event's lookup; the event, the
      // attempt's and the run's writes with the mirror job's whole ingest (finality_ingest, its
      // settlement), the deadline check and the COMMIT (7 round trips before).
      expect(proxy.stop()).toEqual({ statements: 10, roundTrips: 2 });
      expect(done.outcome).toBe("applied");
      expect(await migrated.getJob({ provider: "runs", id: attempt.runId })).toMatchObject({
        state: "succeeded",
      });
    } finally {
      runs.close();
      await store.close();
      await proxy.close();
    }
  });

  it("a run's mirror ingests ask the store for no job back (its ~24 columns left out of the answer)", async () => {
    const plans: (boolean | undefined)[] = [];
    const store = overTx(await open(), (tx) =>
      tx.ingestAtOnce === undefined
        ? {}
        : {
            ingestAtOnce: (obs, plan, last) => {
              plans.push(plan.withoutJob);
              return (tx.ingestAtOnce as NonNullable<typeof tx.ingestAtOnce>).call(tx, obs, plan, last);
            },
          },
    );
    const runs = createRunService({ finality: finalityOn({ store }) });
    try {
      await runs.enqueue({ kind: "render" });
      const second = await runs.enqueue({ kind: "render" });
      const claimed = await runs.claim({ workerId: "w1", start: true });
      const attempt = claimed?.attempt as NonNullable<typeof claimed>["attempt"];
      const ended = await runs.recordEvent(
        attempt.id,
        { generation: attempt.generation, sequence: 1, type: "succeeded" },
        null,
        { start: true },
      );
      expect(ended.next?.run.id).toBe(second.run.id);
      // The claim's mirror (running), then the end's (succeeded) and the next run's (running).
      expect(plans).toEqual([true, true, true]);
      expect(await store.getJob({ provider: "runs", id: second.run.id })).toMatchObject({ state: "running" });
    } finally {
      runs.close();
    }
  });

  it("a claim of one kind sends no SET LOCAL: its index fits whatever the statistics; of several it does", async () => {
    const { proxy, store } = await throughCountingProxy();
    const runs = createRunService({ finality: finalityOn({ store }) });
    try {
      await runs.enqueue({ kind: "render" });
      await runs.enqueue({ kind: "render" });
      proxy.start();
      expect(await runs.claim({ workerId: "w1", kinds: ["render"] })).not.toBeNull();
      // BEGIN with the pick; three writes, the deadline check and the COMMIT.
      expect(proxy.stop()).toEqual({ statements: 7, roundTrips: 2 });
      proxy.start();
      expect(await runs.claim({ workerId: "w1", kinds: ["render", "resize"] })).not.toBeNull();
      expect(proxy.stop()).toEqual({ statements: 8, roundTrips: 2 });
    } finally {
      runs.close();
      await store.close();
      await proxy.close();
    }
  });

  it("a claim that starts the run costs 2 round trips too, and takes the worker's started call away", async () => {
    const { migrated, proxy, store } = await throughCountingProxy();
    const runs = createRunService({ finality: finalityOn({ store }) });
    try {
      const { run } = await runs.enqueue({ kind: "render" });
      proxy.start();
      const claimed = await runs.claim({ workerId: "w1", start: true });
      const counts = proxy.stop();
      expect(claimed?.attempt).toMatchObject({ status: "running", lastSequence: null });
      // BEGIN with the pick (and SET LOCAL); the attempt, the two events in one statement
      // (appendRunEvents), the run's write and the mirror job's ingest (finality_ingest), the
      // deadline check and the COMMIT behind them. (10 statements with an INSERT per event.)
      expect(counts).toEqual({ statements: 9, roundTrips: 2 });
      expect(await migrated.getRun(run.id)).toMatchObject({ status: "running" });
      expect(await migrated.getJob({ provider: "runs", id: run.id })).toMatchObject({ state: "running" });
    } finally {
      runs.close();
      await store.close();
      await proxy.close();
    }
  });

  it("an end that claims the next run (`next`, both with start) is one transaction of 3 round trips, where an end and a claim are two of 2 each", async () => {
    const { migrated, first, second, ended, counts, close } = await endThatClaimsNext();
    try {
      expect(ended.next?.run.id).toBe(second.run.id);
      // BEGIN with the loads and the event's lookup; the end's attempt and run writes, its mirror
      // job's ingest as one statement (finality_ingest, not last) and the pick (SET LOCAL first);
      // the claim's attempt, the end's event and the claim's two in one statement (appendRunEvents),
      // the next run's write and mirror ingest (finality_ingest, last), the deadline check and the
      // COMMIT. (4 round trips when the end's mirror ingest read the job before writing it; 17
      // statements with an INSERT per event.)
      expect(counts).toEqual({ statements: 15, roundTrips: 3 });
      expect(await migrated.getRun(first.run.id)).toMatchObject({ status: "succeeded" });
      expect(await migrated.getRun(second.run.id)).toMatchObject({ status: "running" });
      expect(await migrated.getJob({ provider: "runs", id: first.run.id })).toMatchObject({
        state: "succeeded",
      });
      expect(await migrated.getJob({ provider: "runs", id: second.run.id })).toMatchObject({
        state: "running",
      });
    } finally {
      await close();
    }
  });

  it("an end whose mirror ingest finds more to do (a tombstone) runs again the ordinary way: the end is recorded once, the next run claimed once", async () => {
    // The first run's mirror job gone and its tombstone there: finality_ingest refuses (FNL01)
    // in the middle of the end's transaction, after the pick went out beside it.
    const { migrated, first, second, ended, counts, close } = await endThatClaimsNext(async (firstId) => {
      await admin.unsafe(`DELETE FROM "${schema()}".jobs WHERE provider = 'runs' AND id = $1`, [firstId]);
      await admin.unsafe(
        `INSERT INTO "${schema()}".tombstones (provider, id, state, settled_at, effects_hash)
          VALUES ('runs', $1, 'succeeded', now(), 'h')`,
        [firstId],
      );
    });
    try {
      expect(ended).toMatchObject({ outcome: "applied", run: { status: "succeeded" } });
      expect(ended.next?.run.id).toBe(second.run.id);
      // The refused try (11 statements with its ROLLBACK: refused before the events go out), then
      // the ordinary one (16 statements in 5 round trips, as the end took before its mirror ingest
      // could be one statement; 18 with an INSERT per event). Whether the ROLLBACK shares a round
      // trip with the refused try's last answers is timing's (8 or 9).
      expect(counts.statements).toBe(27);
      expect(counts.roundTrips).toBeGreaterThan(5);
      expect(await migrated.getRun(first.run.id)).toMatchObject({ status: "succeeded" });
      expect((await migrated.runAttempts(second.run.id)).map((a) => a.status)).toEqual(["running"]);
      expect(await migrated.getJob({ provider: "runs", id: first.run.id })).toBeNull();
      const events = await migrated.jobEvents({ provider: "runs", id: first.run.id });
      // Its events outlive the row (enqueue, start), and the end's, once: the tombstone answered.
      expect(events.map((event) => [event.state, event.reason])).toEqual([
        ["pending", null],
        ["running", null],
        ["succeeded", "already-settled-pruned"],
      ]);
    } finally {
      await close();
    }
  });

  it("an enqueue costs 2 round trips: BEGIN with the mirror job's read; the run, its event and the mirror's insert with the COMMIT", async () => {
    const { migrated, proxy, store } = await throughCountingProxy();
    const runs = createRunService({ finality: finalityOn({ store }) });
    try {
      proxy.start();
      const { run } = await runs.enqueue({ kind: "render" });
      const counts = proxy.stop();
      // BEGIN with the mirror job's read (loadForIngest, withBegin); then the run and its event
      // beside the mirror's insert with its event (reading the tombstone and taking parked
      // observations: writeJobWithEvent's last), the deadline check and the COMMIT. It was 6
      // round trips, one a statement, and 9 before the tombstone's read and the take joined it.
      expect(counts).toEqual({ statements: 7, roundTrips: 2 });
      expect(await migrated.getJob({ provider: "runs", id: run.id })).toMatchObject({ state: "pending" });
    } finally {
      runs.close();
      await store.close();
      await proxy.close();
    }
  });
});
