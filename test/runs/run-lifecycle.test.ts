import { describe, expect, it } from "vitest";
import { RUNS_PROVIDER } from "../../src/core/run-model.js";
import { engineOf } from "../helpers/engine.js";
import { openEngine, refusal, runningRun, runSnapshot } from "./engine-harness.js";

describe("runs: enqueue and claim", () => {
  it("enqueues once per idempotency key, mirrors the run as a registered job that is never polled", async () => {
    const engine = openEngine();
    const first = await engine.runs.enqueue({ kind: "render", input: { page: 1 }, idempotencyKey: "k1" });
    const again = await engine.runs.enqueue({ kind: "render", input: { page: 1 }, idempotencyKey: "k1" });
    expect(first.created).toBe(true);
    expect(again).toMatchObject({ created: false, run: { id: first.run.id, status: "queued" } });
    expect(await refusal(engine.runs.enqueue({ kind: "other", idempotencyKey: "k1" }))).toBe("conflict");
    const job = await engine.finality.getJob({ provider: RUNS_PROVIDER, id: first.run.id });
    expect(job).toMatchObject({ state: "pending", kind: "render", registered: true, nextCheckAt: null });
    expect((await engineOf(engine.finality).store.listRuns({})).items).toHaveLength(1);
  });

  it("claims the oldest run of the asked kinds, once, with generation 1 and a lease", async () => {
    const engine = openEngine();
    const a = await engine.runs.enqueue({ kind: "render" });
    const b = await engine.runs.enqueue({ kind: "encode" });
    const c = await engine.runs.enqueue({ kind: "render" });
    const claimed = await engine.runs.claim({ workerId: "w1", kinds: ["encode"], leaseSeconds: 10 });
    expect(claimed?.run).toMatchObject({
      id: b.run.id,
      status: "dispatching",
      generation: 1,
      attemptCount: 1,
    });
    expect(claimed?.attempt).toMatchObject({
      status: "claimed",
      generation: 1,
      leaseExpiresAt: engine.clock.now() + 10_000,
    });
    expect((await engine.runs.claim({ workerId: "w2", kinds: null }))?.run.id).toBe(a.run.id);
    expect((await engine.runs.claim({ workerId: "w3" }))?.run.id).toBe(c.run.id);
    expect(await engine.runs.claim({ workerId: "w4" })).toBeNull();
  });

  it("a waiting claim wakes when a run is enqueued in this process (no re-check needed)", async () => {
    const engine = openEngine({ recheckMs: 600_000 });
    const waiting = engine.runs.claim({ workerId: "w1", waitSeconds: 30 });
    const { run } = await engine.runs.enqueue({ kind: "render" });
    expect((await waiting)?.run.id).toBe(run.id);
  }, 5_000);

  it("a waiting claim answers null at once when the service closes", async () => {
    const engine = openEngine({ recheckMs: 600_000 });
    const waiting = engine.runs.claim({ workerId: "w1", waitSeconds: 30 });
    engine.runs.close();
    expect(await waiting).toBeNull();
  }, 5_000);
});

describe("runs: heartbeats and callbacks", () => {
  it("heartbeats extend the lease, mark the attempt starting, and refuse a stale generation", async () => {
    const engine = openEngine();
    await engine.runs.enqueue({ kind: "render" });
    const claimed = (await engine.runs.claim({ workerId: "w1", leaseSeconds: 10 }))!;
    engine.clock.advance(5_000);
    const beat = await engine.runs.heartbeat(claimed.attempt.id, { generation: 1 });
    expect(beat.attempt).toMatchObject({ status: "starting", leaseExpiresAt: engine.clock.now() + 10_000 });
    expect(beat.run.cancelRequested).toBe(false);
    expect(await refusal(engine.runs.heartbeat(claimed.attempt.id, { generation: 2 }))).toBe(
      "stale-generation:stale-generation",
    );
    expect(await refusal(engine.runs.heartbeat("nope", { generation: 1 }))).toBe("not-found");
    expect(await refusal(engine.runs.heartbeat(claimed.attempt.id, { generation: 1 }, ["other-kind"]))).toBe(
      "not-found",
    );
  });

  it("out-of-order and duplicate callbacks: monotonic state, each applied once", async () => {
    const engine = openEngine();
    const { attempt, run } = await runningRun(engine);
    const send = (sequence: number, type: "started" | "progress" | "succeeded", extra = {}) =>
      engine.runs.recordEvent(attempt.id, { generation: 1, sequence, type, ...extra });
    // Sent 2, 3, 4; arrive 4, 2, 3, 4, 2.
    expect((await send(4, "succeeded", { output: { url: "s3://x" } })).outcome).toBe("applied");
    expect((await send(2, "progress", { progress: 0.5 })).outcome).toBe("out_of_order");
    expect((await send(3, "progress", { progress: 0.9 })).outcome).toBe("out_of_order");
    expect((await send(4, "succeeded", { output: { url: "other" } })).outcome).toBe("duplicate");
    expect((await send(2, "progress")).outcome).toBe("duplicate");
    const after = await runSnapshot(engine, run.id);
    expect(after.run).toMatchObject({ status: "succeeded", output: { url: "s3://x" } });
    expect(after.attempts[0]).toMatchObject({ status: "succeeded", lastSequence: 4, leaseExpiresAt: null });
    expect(after.job).toMatchObject({ state: "succeeded", result: { url: "s3://x" }, settledBy: "worker" });
    expect(after.effects).toHaveLength(1);
    // One event per distinct sequence (claimed, 1, 4, 2, 3), none for the duplicates.
    expect(after.events.map((e) => e.type)).toEqual([
      "run.queued",
      "attempt.claimed",
      "worker.started",
      "worker.succeeded",
      "worker.progress",
      "worker.progress",
    ]);
  });

  it("progress keeps the latest by sequence; a newer started after progress is still applied in order", async () => {
    const engine = openEngine();
    const { attempt, run } = await runningRun(engine);
    await engine.runs.recordEvent(attempt.id, { generation: 1, sequence: 3, type: "progress", progress: 30 });
    await engine.runs.recordEvent(attempt.id, { generation: 1, sequence: 2, type: "progress", progress: 20 });
    const [stored] = await engineOf(engine.finality).store.runAttempts(run.id);
    expect(stored).toMatchObject({ status: "running", progress: 30, lastSequence: 3 });
    expect((await engineOf(engine.finality).store.getRun(run.id))?.status).toBe("running");
  });

  it("a failure retries after a backoff with a new attempt and generation; the mirror stays running", async () => {
    const engine = openEngine();
    const { attempt, run } = await runningRun(engine, { maxAttempts: 2 });
    const failed = await engine.runs.recordEvent(attempt.id, {
      generation: 1,
      sequence: 2,
      type: "failed",
      error: { message: "GPU fell off" },
    });
    expect(failed.run).toMatchObject({ status: "queued", availableAt: engine.clock.now() + 1_000 });
    expect(await engine.runs.claim({ workerId: "w2" })).toBeNull();
    engine.clock.advance(1_000);
    const second = (await engine.runs.claim({ workerId: "w2" }))!;
    expect(second.attempt.generation).toBe(2);
    expect((await engine.finality.getJob({ provider: RUNS_PROVIDER, id: run.id }))?.state).toBe("running");
    await engine.runs.recordEvent(second.attempt.id, { generation: 2, sequence: 1, type: "started" });
    const last = await engine.runs.recordEvent(second.attempt.id, {
      generation: 2,
      sequence: 2,
      type: "failed",
      error: { message: "again" },
    });
    expect(last.run).toMatchObject({ status: "failed", error: { message: "again" } });
    const after = await runSnapshot(engine, run.id);
    expect(after.job).toMatchObject({ state: "failed", error: { message: "again" } });
    expect(after.effects.map((e) => e.trigger)).toEqual(["failed"]);
  });

  it("an error marked retryable: false fails the run at once", async () => {
    const engine = openEngine();
    const { attempt } = await runningRun(engine, { maxAttempts: 5 });
    const result = await engine.runs.recordEvent(attempt.id, {
      generation: 1,
      sequence: 2,
      type: "failed",
      error: { message: "bad input", retryable: false },
    });
    expect(result.run.status).toBe("failed");
  });
});

describe("runs: cancel", () => {
  it("cancel while queued: cancelled at once, never dispatched, effects once", async () => {
    const engine = openEngine();
    const { run } = await engine.runs.enqueue({ kind: "render" });
    expect((await engine.runs.cancel(run.id)).status).toBe("cancelled");
    expect((await engine.runs.cancel(run.id)).status).toBe("cancelled");
    expect(await engine.runs.claim({ workerId: "w1" })).toBeNull();
    const after = await runSnapshot(engine, run.id);
    expect(after.attempts).toEqual([]);
    expect(after.job?.state).toBe("cancelled");
    expect(after.effects).toHaveLength(1);
    expect(await refusal(engine.runs.cancel("missing"))).toBe("not-found");
  });

  it("cancel while running: the heartbeat says so, the worker's acknowledgement ends it cancelled", async () => {
    const engine = openEngine();
    const { attempt, run } = await runningRun(engine);
    const flagged = await engine.runs.cancel(run.id);
    expect(flagged).toMatchObject({ status: "running", cancelRequested: true });
    expect((await engine.runs.heartbeat(attempt.id, { generation: 1 })).run.cancelRequested).toBe(true);
    const ack = await engine.runs.recordEvent(attempt.id, { generation: 1, sequence: 2, type: "cancelled" });
    expect(ack.run.status).toBe("cancelled");
    expect((await runSnapshot(engine, run.id)).job?.state).toBe("cancelled");
  });
});
