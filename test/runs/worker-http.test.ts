import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { createWorker, type RunAbortedError } from "../../src/worker/worker-client.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { client, type Proc, startScript, startServer, waitFor } from "./http-harness.js";

/** Over real HTTP: the server and the killed or frozen workers are separate processes. */
describe("runs over HTTP, with worker processes", () => {
  let dir: TempDir;
  let server: Proc;
  let api: ReturnType<typeof client>;
  let url: string;
  const children: Proc[] = [];

  beforeAll(async () => {
    dir = tempDir("finality-runs-http-");
    ({ server, url } = await startServer(dir.file("ledger.db")));
    api = client(url);
  });
  afterAll(async () => {
    for (const child of children) child.signal("SIGKILL");
    server?.signal("SIGTERM");
    await server?.exited;
    dir?.cleanup();
  });

  function worker(workerId: string, kind: string, leaseSeconds = 1): Proc {
    const child = startScript("worker-child.mjs", [url, workerId, kind, String(leaseSeconds)]);
    children.push(child);
    return child;
  }
  const startedLine = async (child: Proc) => {
    const [, runId, attemptId, generation] = (await child.line((l) => l.startsWith("started "))).split(" ");
    return { runId: runId!, attemptId: attemptId!, generation: Number(generation) };
  };
  const attemptStatus = (runId: string, index: number, status: string) =>
    waitFor(`attempt ${index} of ${runId} to be ${status}`, async () => {
      const run = await api.run(runId);
      return run.attempts[index]?.status === status ? run : undefined;
    });

  it("a worker killed with SIGKILL: lease expires, attempt lost, a second worker gets generation 2, the late success gets 409", async () => {
    const { body: queued, status } = await api.enqueue({ kind: "killed", maxAttempts: 3, input: { n: 1 } });
    expect(status).toBe(201);
    const first = worker("worker-a", "killed");
    const a = await startedLine(first);
    expect(a).toMatchObject({ runId: queued.id, generation: 1 });
    await attemptStatus(a.runId, 0, "running");
    first.signal("SIGKILL");
    await first.exited;

    const afterLoss = await attemptStatus(a.runId, 0, "lost");
    expect(afterLoss.attempts[0].error.code).toBe("REMOTE_RUN_LEASE_EXPIRED");
    const second = worker("worker-b", "killed", 30);
    const b = await startedLine(second);
    expect(b).toMatchObject({ runId: a.runId, generation: 2 });
    await attemptStatus(b.runId, 1, "running");

    const before = { run: await api.run(a.runId), events: await api.events(a.runId) };
    const late = await api.event(a.attemptId, {
      generation: 1,
      sequence: 2,
      type: "succeeded",
      output: { by: "a" },
    });
    expect(late.status).toBe(409);
    expect(late.contentType).toContain("application/problem+json");
    expect(late.body).toMatchObject({ code: "stale-generation", reason: "lease-lost" });
    expect(await api.run(a.runId)).toEqual(before.run);
    expect(await api.events(a.runId)).toEqual(before.events);

    second.send("finish");
    await second.line((l) => l === "done");
    const done = await api.run(a.runId);
    expect(done).toMatchObject({ status: "succeeded", output: { by: "worker-b" }, generation: 2 });
    expect(done.attempts.map((x: { status: string }) => x.status)).toEqual(["lost", "succeeded"]);
    await server.line((l) => l === `effect notify ${a.runId} succeeded`);
  });

  it("a partitioned worker (alive, heartbeats stopped) that comes back is refused and told to stop", async () => {
    const { body: queued } = await api.enqueue({ kind: "partitioned", maxAttempts: 1 });
    const child = worker("worker-p", "partitioned");
    const p = await startedLine(child);
    expect(p.runId).toBe(queued.id);
    await attemptStatus(p.runId, 0, "running");
    child.signal("SIGSTOP");
    const lost = await attemptStatus(p.runId, 0, "lost");
    expect(lost.status).toBe("lost");
    const eventsWhileAway = await api.events(p.runId);
    child.signal("SIGCONT");
    expect(await child.line((l) => l.startsWith("aborted "))).toBe("aborted lease-lost");
    await child.line((l) => l === "done");
    // It reported nothing after coming back: the ledger is as the sweeper left it.
    expect(await api.events(p.runId)).toEqual(eventsWhileAway);
    expect((await api.heartbeat(p.attemptId, 1)).status).toBe(409);
    await server.line((l) => l === `effect notify ${p.runId} lost`);
  });

  it("cancel while running: the handler's signal fires and the run ends cancelled", async () => {
    const aborted: string[] = [];
    let started: (id: string) => void = () => {};
    const startedId = new Promise<string>((resolve) => {
      started = resolve;
    });
    const inProcess = createWorker({
      baseUrl: url,
      workerId: "worker-c",
      kinds: ["cancel-me"],
      leaseSeconds: 1,
      waitSeconds: 1,
      handler: (run, { signal }) =>
        new Promise((_, reject) => {
          started(run.id);
          signal.addEventListener("abort", () => {
            aborted.push((signal.reason as RunAbortedError).reason);
            reject(signal.reason);
          });
        }),
    });
    inProcess.start();
    try {
      const { body: queued } = await api.enqueue({ kind: "cancel-me" });
      expect(await startedId).toBe(queued.id);
      await attemptStatus(queued.id, 0, "running");
      expect((await api.cancel(queued.id)).body).toMatchObject({ cancelRequested: true, status: "running" });
      const ended = await waitFor("the run to end", async () => {
        const run = await api.run(queued.id);
        return run.settledAt ? run : undefined;
      });
      expect(ended.status).toBe("cancelled");
      expect(ended.attempts[0].status).toBe("cancelled");
      expect(aborted).toEqual(["cancel-requested"]);
      await server.line((l) => l === `effect notify ${queued.id} cancelled`);
    } finally {
      await inProcess.stop();
    }
  });

  it("cancel while queued: never dispatched, while later runs of the same kind are", async () => {
    const { body: cancelled } = await api.enqueue({ kind: "queued-cancel" });
    expect((await api.cancel(cancelled.id)).body.status).toBe("cancelled");
    const seen: string[] = [];
    const inProcess = createWorker({
      baseUrl: url,
      workerId: "worker-q",
      kinds: ["queued-cancel"],
      waitSeconds: 1,
      handler: async (run) => {
        seen.push(run.id);
        return { ok: true };
      },
    });
    inProcess.start();
    try {
      const { body: next } = await api.enqueue({ kind: "queued-cancel" });
      await waitFor("the next run to succeed", async () =>
        (await api.run(next.id)).status === "succeeded" ? true : undefined,
      );
      expect(seen).toEqual([next.id]);
      expect(await api.run(cancelled.id)).toMatchObject({ status: "cancelled", attempts: [] });
    } finally {
      await inProcess.stop();
    }
  });

  it("a run's terminal state enqueues its effects once, through the mirror job", async () => {
    const { body: queued } = await api.enqueue({ kind: "effects", idempotencyKey: "effects-1" });
    expect((await api.enqueue({ kind: "effects", idempotencyKey: "effects-1" })).status).toBe(200);
    const claim = await api.claim("raw", { kinds: ["effects"], waitSeconds: 0 });
    expect(claim.status).toBe(200);
    const { id, generation } = claim.body.attempt;
    const send = (sequence: number, type: string) =>
      api.event(id, { generation, sequence, type, output: { sequence } });
    expect((await send(1, "started")).body.outcome).toBe("applied");
    expect((await send(2, "succeeded")).body).toMatchObject({ outcome: "applied", runStatus: "succeeded" });
    expect((await send(2, "succeeded")).body).toMatchObject({ outcome: "duplicate", applied: false });
    expect((await send(1, "started")).body.outcome).toBe("duplicate");
    expect((await send(3, "failed")).body.outcome).toBe("out_of_order");
    await server.line((l) => l === `effect notify ${queued.id} succeeded`);
    const job = await api.call("GET", `/v1/jobs/runs/${queued.id}`);
    expect(job.body).toMatchObject({ state: "succeeded", result: { sequence: 2 } });
    expect((await api.claim("raw", { kinds: ["effects"], waitSeconds: 0 })).status).toBe(204);
    const store = createSqliteStore({ path: dir.file("ledger.db") });
    try {
      const { items } = await store.listEffects({ provider: "runs", jobId: queued.id });
      expect(items.map((e) => [e.trigger, e.status])).toEqual([["succeeded", "delivered"]]);
    } finally {
      await store.close();
    }
  });

  it("refuses bad requests as problems: unknown attempt 404, bad body 400, stale generation 409", async () => {
    expect((await api.heartbeat("nope", 1)).status).toBe(404);
    const bad = await api.enqueue({ kind: "has space" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: "invalid-request", field: "kind" });
    expect((await api.call("GET", "/v1/runs?status=bogus")).status).toBe(400);
    const badStart = await api.claim("w-bad", { start: "yes" });
    expect(badStart.status).toBe(400);
    expect(badStart.body).toMatchObject({ code: "invalid-request", field: "start" });
    const list = await api.call("GET", "/v1/runs?kind=effects");
    expect(list.body.items).toHaveLength(1);
  });
});
