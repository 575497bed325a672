import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FalFake } from "../fakes/fal-fake.js";
import { startWorkerLedger, type WorkerLedger } from "./helpers/worker-ledger.js";

// The fal adapter inside workerd: its Ed25519 check and key-set fetch are WebCrypto and fetch
// only, and its poller reads status then result through the cron run.

describe("fal on Workers", () => {
  let worker: WorkerLedger;
  const fake = new FalFake();
  beforeAll(async () => {
    const base = await fake.listen();
    worker = await startWorkerLedger({
      providers: {
        fal: {
          type: "fal",
          baseUrl: base,
          apiKey: fake.apiKey,
          app: "fal-ai/flux/dev",
          webhook: { jwksUrl: fake.jwksUrl, userIds: [fake.userId] },
        },
      },
      reconcile: { graceSeconds: 0 },
      log: { level: "error" },
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await fake.close();
  });

  const post = (delivery: { body: string; headers: Record<string, string> }) =>
    worker.fetch("/webhooks/fal", { method: "POST", headers: delivery.headers, body: delivery.body });
  const ok = (id: string) => ({ request_id: id, gateway_request_id: id, status: "OK", payload: { seed: 3 } });

  it("verifies fal's signature against the fetched key set; refuses another key's", async () => {
    const forged = await post(fake.webhook(ok("w_forged"), { key: FalFake.strangerKey() }));
    expect(forged.status, await forged.clone().text()).toBe(401);
    const accepted = await post(fake.webhook(ok("w_ok")));
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ outcome: "applied", state: "succeeded" });
    const job = (await (await worker.fetch("/v1/jobs/fal/w_ok")).json()) as Record<string, unknown>;
    expect(job).toMatchObject({ state: "succeeded", result: { seed: 3 } });
    expect(worker.outbound.filter((url) => url.endsWith("/.well-known/jwks.json")).length).toBeGreaterThan(0);
  });

  it("the cron run polls a registered request: status, then result", async () => {
    fake.set({
      id: "w_polled",
      endpoint: "fal-ai/flux/dev",
      status: "COMPLETED",
      payload: { seed: 9 },
      sentAt: new Date().toISOString(),
    });
    const registered = await worker.fetch("/v1/jobs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ provider: "fal", id: "w_polled", kind: "fal-ai/flux/dev" }),
    });
    expect(registered.status).toBeLessThan(300);
    await worker.scheduled();
    const job = (await (await worker.fetch("/v1/jobs/fal/w_polled")).json()) as Record<string, unknown>;
    expect(job).toMatchObject({ state: "succeeded", settledBy: "reconcile", result: { seed: 9 } });
  });
});
