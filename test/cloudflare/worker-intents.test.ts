import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { startWorkerLedger, type WorkerLedger } from "./helpers/worker-ledger.js";

// Intents on Workers: the API on the ledger Durable Object, and the cron run flagging an intent
// past its timeout once, its alert delivered through the outbox.

const TIMEOUT_SECONDS = 0.3;

describe("intents on Workers", () => {
  let worker: WorkerLedger;
  const receiver = new EffectReceiver(SECRET);
  const fake = new FakeProvider();
  beforeAll(async () => {
    await receiver.listen();
    await fake.listen();
    worker = await startWorkerLedger({
      providers: {
        acme: {
          type: "generic",
          webhook: { secrets: [SECRET] },
          intentTimeoutSeconds: TIMEOUT_SECONDS,
          discover: { enabled: true, url: `${fake.url}/jobs?after={cursor}` },
        },
      },
      effects: [{ name: "orphans", url: receiver.url, secret: SECRET, on: ["orphaned"] }],
      log: { level: "info" },
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await receiver.close();
    await fake.close();
  });

  const post = (path: string, body: unknown) =>
    worker.fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("records, attaches, and flags an open intent orphaned once in the cron run", async () => {
    expect((await post("/v1/intents", { provider: "acme", key: "a", kind: "render" })).status).toBe(201);
    expect((await post("/v1/intents", { provider: "acme", key: "a", kind: "render" })).status).toBe(200);
    expect((await post("/v1/intents/a/attach", { id: "remote-a" })).status).toBe(200);
    expect((await post("/v1/intents", { provider: "acme", key: "b" })).status).toBe(201);
    // The timeout is measured on the wall clock: only waiting it out makes the intent overdue.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_SECONDS * 1000 + 200));
    await worker.scheduled();
    await worker.scheduled();
    const runs = worker.runtimeLog
      .filter((line) => line.includes('"scheduled run"'))
      .map((line) => JSON.parse(line.slice(line.indexOf("{"))) as { orphaned: number; discovered: number });
    expect(runs.map((run) => run.orphaned)).toEqual([1, 0]);
    expect(runs.map((run) => run.discovered)).toEqual([0, 0]);
    const b = (await (await worker.fetch("/v1/intents/b")).json()) as { status: string };
    expect(b.status).toBe("orphaned");
    const a = (await (await worker.fetch("/v1/intents/a")).json()) as { status: string; jobId: string };
    expect(a).toMatchObject({ status: "attached", jobId: "remote-a" });
    await receiver.until(() => receiver.deliveries.length > 0);
    expect(receiver.deliveries.map((d) => [d.body.type, d.body.job.id])).toEqual([["intent.orphaned", "b"]]);
  });

  it("the cron run sweeps the list API: a job tagged with an open intent is attached, another adopted", async () => {
    expect((await post("/v1/intents", { provider: "acme", key: "c", kind: "render" })).status).toBe(201);
    fake.addJob("remote-c", [{ afterMs: 0, state: "succeeded" }], { tag: "c" });
    fake.addJob("remote-d", [{ afterMs: 0, state: "running" }]);
    const before = worker.runtimeLog.length;
    await worker.scheduled();
    const run = worker.runtimeLog
      .slice(before)
      .filter((line) => line.includes('"scheduled run"'))
      .map((line) => JSON.parse(line.slice(line.indexOf("{"))) as { discovered: number });
    expect(run).toEqual([expect.objectContaining({ discovered: 2 })]);
    const c = (await (await worker.fetch("/v1/intents/c")).json()) as Record<string, unknown>;
    expect(c).toMatchObject({ status: "attached", jobId: "remote-c", attachedBy: "discovery" });
    const job = (await (await worker.fetch("/v1/jobs/acme/remote-c")).json()) as Record<string, unknown>;
    expect(job).toMatchObject({ state: "succeeded", kind: "render", settledBy: "discovery" });
    const d = (await (await worker.fetch("/v1/jobs/acme/remote-d")).json()) as { state: string };
    expect(d.state).toBe("running");
  });
});
