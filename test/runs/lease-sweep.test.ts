import { describe, expect, it } from "vitest";
import { LEASE_EXPIRED_CODE } from "../../src/core/run-model.js";
import { createRunService } from "../../src/runs/run-service.js";
import { sweepUntilDone } from "../../src/runs/sweep-until-done.js";
import { engineOf } from "../helpers/engine.js";
import { type Engine, openEngine, openLedger, refusal, runningRun, runSnapshot } from "./engine-harness.js";

const expired = (counts: Record<string, number>) =>
  Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));

async function leaseExpiryEvents(engine: Engine, runId: string) {
  return (await engineOf(engine.finality).store.runEvents(runId)).filter((e) =>
    e.dedupeKey.startsWith("lease-expiry:"),
  );
}

describe("lease sweeper", () => {
  it("a running attempt whose lease runs out is lost; the run is retried with a higher generation", async () => {
    const engine = openEngine();
    const { attempt, run } = await runningRun(engine, { leaseSeconds: 10 });
    engine.clock.advance(9_999);
    expect(expired(await engine.runs.sweepOnce())).toEqual({});
    engine.clock.advance(1);
    expect(expired(await engine.runs.sweepOnce())).toEqual({ lost_retry: 1 });
    const after = await runSnapshot(engine, run.id);
    expect(after.attempts[0]).toMatchObject({
      id: attempt.id,
      status: "lost",
      leaseExpiresAt: null,
      error: { code: LEASE_EXPIRED_CODE },
    });
    expect(after.run).toMatchObject({ status: "queued", generation: 1 });
    engine.clock.advance(1_000);
    const second = await engine.runs.claim({ workerId: "w2" });
    expect(second?.attempt.generation).toBe(2);
  });

  it("running the sweeper twice changes nothing the second time", async () => {
    const engine = openEngine();
    const { run } = await runningRun(engine, { leaseSeconds: 10 });
    engine.clock.advance(10_000);
    await engine.runs.sweepOnce();
    const once = await runSnapshot(engine, run.id);
    expect(expired(await engine.runs.sweepOnce())).toEqual({});
    expect(await runSnapshot(engine, run.id)).toEqual(once);
    expect(await leaseExpiryEvents(engine, run.id)).toHaveLength(1);
  });

  it("the stale worker's late success is refused with 409 and changes nothing", async () => {
    const engine = openEngine();
    const { attempt, run } = await runningRun(engine, { leaseSeconds: 10 });
    engine.clock.advance(10_000);
    await engine.runs.sweepOnce();
    engine.clock.advance(1_000);
    const second = (await engine.runs.claim({ workerId: "w2" }))!;
    await engine.runs.recordEvent(second.attempt.id, { generation: 2, sequence: 1, type: "started" });
    const before = await runSnapshot(engine, run.id);
    const late = engine.runs.recordEvent(attempt.id, {
      generation: 1,
      sequence: 2,
      type: "succeeded",
      output: 1,
    });
    expect(await refusal(late)).toBe("stale-generation:lease-lost");
    // The old attempt id with the new generation is no better.
    const forged = engine.runs.recordEvent(attempt.id, { generation: 2, sequence: 2, type: "succeeded" });
    expect(await refusal(forged)).toBe("stale-generation:stale-generation");
    expect(await refusal(engine.runs.heartbeat(attempt.id, { generation: 1 }))).toBe(
      "stale-generation:lease-lost",
    );
    expect(await runSnapshot(engine, run.id)).toEqual(before);
  });

  it("a lease past its time is expired on contact: the late heartbeat is refused and the run freed", async () => {
    const engine = openEngine();
    const { attempt, run } = await runningRun(engine, { leaseSeconds: 10 });
    engine.clock.advance(10_000);
    expect(await refusal(engine.runs.heartbeat(attempt.id, { generation: 1 }))).toBe(
      "stale-generation:lease-expired",
    );
    const after = await runSnapshot(engine, run.id);
    expect(after.attempts[0]?.status).toBe("lost");
    expect(after.run?.status).toBe("queued");
    // The sweeper finds nothing left to do, and records nothing twice.
    expect(expired(await engine.runs.sweepOnce())).toEqual({});
    expect(await leaseExpiryEvents(engine, run.id)).toHaveLength(1);
  });

  it("attempts spent: the run ends lost, its mirror job lost, effects enqueued once", async () => {
    const engine = openEngine();
    const { run } = await runningRun(engine, { maxAttempts: 1, leaseSeconds: 10 });
    engine.clock.advance(10_000);
    expect(expired(await engine.runs.sweepOnce())).toEqual({ lost_final: 1 });
    const after = await runSnapshot(engine, run.id);
    expect(after.run).toMatchObject({ status: "lost", error: { code: LEASE_EXPIRED_CODE } });
    expect(after.job).toMatchObject({ state: "lost", settledBy: "lease" });
    expect(after.effects.map((e) => e.trigger)).toEqual(["lost"]);
  });

  it("claimed but never started: released, run back to queued without spending an attempt", async () => {
    const engine = openEngine();
    const { run } = await engine.runs.enqueue({ kind: "render", maxAttempts: 1 });
    const claimed = (await engine.runs.claim({ workerId: "w1", leaseSeconds: 10 }))!;
    engine.clock.advance(10_000);
    expect(expired(await engine.runs.sweepOnce())).toEqual({ unstarted_released: 1 });
    expect(await engineOf(engine.finality).store.getRun(run.id)).toMatchObject({
      status: "queued",
      attemptCount: 0,
    });
    expect(
      await refusal(
        engine.runs.recordEvent(claimed.attempt.id, { generation: 1, sequence: 1, type: "started" }),
      ),
    ).toBe("stale-generation:lease-lost");
    const again = (await engine.runs.claim({ workerId: "w2" }))!;
    expect(again.attempt.generation).toBe(2);
    expect((await engine.finality.getJob({ provider: "runs", id: run.id }))?.state).toBe("pending");
  });

  it("cancel requested and the worker went silent: cancellation_pending, then the run is cancelled", async () => {
    const engine = openEngine();
    const { run } = await runningRun(engine, { leaseSeconds: 10 });
    await engine.runs.cancel(run.id);
    engine.clock.advance(10_000);
    expect(expired(await engine.runs.sweepOnce())).toEqual({ cancellation_pending: 1 });
    const after = await runSnapshot(engine, run.id);
    expect(after.run?.status).toBe("cancelled");
    expect(after.attempts[0]?.status).toBe("cancelled");
    expect((await leaseExpiryEvents(engine, run.id)).map((e) => e.type)).toEqual([
      "lease.cancellation_pending",
      "run.cancelled",
    ]);
    expect(after.job?.state).toBe("cancelled");
  });

  it("two sweepers on two connections to one file, at once: every expiry recorded exactly once", async () => {
    const engine = openEngine();
    const other = createRunService({ finality: openLedger(engine.file, engine.clock), random: () => 0.5 });
    const runIds: string[] = [];
    for (let i = 0; i < 40; i++) runIds.push((await runningRun(engine, { leaseSeconds: 10 })).run.id);
    engine.clock.advance(10_000);
    const [a, b] = await Promise.all([engine.runs.sweepOnce(), other.sweepOnce()]);
    const changed = (counts: Record<string, number>) => (counts.lost_retry ?? 0) + (counts.lost_final ?? 0);
    expect(changed(a) + changed(b)).toBe(40);
    // Both saw all 40 leases due and decided each: the loser of each race found it expired.
    expect((a.already_expired ?? 0) + (b.already_expired ?? 0)).toBe(40);
    expect(expired(await engine.runs.sweepOnce())).toEqual({});
    expect(expired(await other.sweepOnce())).toEqual({});
    for (const id of runIds) {
      const snapshot = await runSnapshot(engine, id);
      expect(snapshot.attempts.map((x) => x.status)).toEqual(["lost"]);
      expect(snapshot.run).toMatchObject({ status: "queued", version: 4 });
      expect(await leaseExpiryEvents(engine, id)).toHaveLength(1);
    }
  });

  it("sweep --once works through full batches until nothing is due, and says what it did", async () => {
    const engine = openEngine();
    for (let i = 0; i < 5; i++) await runningRun(engine, { leaseSeconds: 10 });
    engine.clock.advance(10_000);
    expect(await sweepUntilDone(engine.runs, 2)).toBe("sweep: lost_retry 5");
    expect(await sweepUntilDone(engine.runs, 2)).toBe("sweep: no lease was due");
  });
});
