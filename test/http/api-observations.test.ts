import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { engineOf } from "../helpers/engine.js";
import { ACME, type InProcess, inProcessApp } from "./helpers/in-process.js";
import { SECRET } from "./helpers/webhooks.js";

// POST /v1/jobs/:provider/:id/observations: what the application (or an operator) knows about a
// job, fed through the same reducer as a webhook, with `source: "api"`.

let t: InProcess;
beforeEach(async () => {
  t = await inProcessApp({
    providers: { acme: ACME, strict: { ...ACME, unknownJobs: "registered-only" } },
    effects: [
      { name: "notify", url: "http://127.0.0.1:9/done", secret: SECRET, on: ["failed", "succeeded"] },
    ],
  });
});
afterEach(async () => {
  await t.close();
});

function observe(path: string, body: unknown, headers: Record<string, string> = {}) {
  return t.app.request(`/v1/jobs/${path}/observations`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("API observations", () => {
  it("settle a job through the reducer: applied once, effects enqueued, a later lower rank ignored", async () => {
    await t.finality.register({ provider: "acme", id: "operations/abc" });
    const settled = await observe("acme/operations%2Fabc", {
      state: "failed",
      error: { reason: "abandoned" },
    });
    expect(settled.status).toBe(200);
    const body = (await settled.json()) as {
      outcome: string;
      applied: boolean;
      job: Record<string, unknown>;
    };
    expect(body).toMatchObject({ outcome: "applied", applied: true });
    expect(body.job).toMatchObject({
      id: "operations/abc",
      state: "failed",
      settledBy: "api",
      error: { reason: "abandoned" },
    });
    expect((await engineOf(t.finality).store.listEffects({ jobId: "operations/abc" })).items).toHaveLength(1);

    const late = await observe("acme/operations%2Fabc", { state: "running", seq: 9 });
    expect(await late.json()).toMatchObject({
      outcome: "lower-rank",
      applied: false,
      job: { state: "failed" },
    });
    const events = await t.finality.jobEvents({ provider: "acme", id: "operations/abc" });
    expect(events.map((e) => [e.source, e.state, e.applied])).toEqual([
      ["api", "pending", true],
      ["api", "failed", true],
      ["api", "running", false],
    ]);
  });

  it("dedupe a retried call by its Idempotency-Key", async () => {
    const first = await observe("acme/j1", { state: "running", seq: 1 }, { "idempotency-key": "k-1" });
    expect(await first.json()).toMatchObject({ outcome: "applied" });
    const again = await observe("acme/j1", { state: "running", seq: 1 }, { "idempotency-key": "k-1" });
    expect(await again.json()).toMatchObject({ outcome: "duplicate-delivery", applied: false });
    // The key is the API's own: a webhook delivery id of the same text is another delivery.
    expect(await engineOf(t.finality).store.transaction((tx) => tx.recordDelivery("acme", "k-1", 0))).toBe(
      true,
    );
  });

  it("follow the provider's policy for a job never registered", async () => {
    expect(await (await observe("acme/new", { state: "running" })).json()).toMatchObject({
      outcome: "applied",
    });
    // Kept in the early-completion inbox until the job is registered, not applied.
    const parked = await observe("strict/new", { state: "running" });
    expect(await parked.json()).toMatchObject({ outcome: "parked", applied: false, job: null });
    expect(await t.finality.getJob({ provider: "strict", id: "new" })).toBeNull();
    expect(
      (await engineOf(t.finality).store.listParked({ provider: "strict", id: "new" })).items,
    ).toHaveLength(1);
  });

  it("refuse a bad body with a problem, changing nothing", async () => {
    await t.finality.register({ provider: "acme", id: "j2" });
    for (const [body, field] of [
      ["not json", "(root)"],
      [{ state: "failed", source: "webhook" }, "(root)"],
      [{ state: "" }, "state"],
      [{ state: "failed", seq: -1 }, "seq"],
    ] as const) {
      const response = await observe("acme/j2", body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      const problem = (await response.json()) as { field?: string };
      if (field !== "(root)") expect(problem.field).toBe(field);
    }
    const tooLong = await observe("acme/j2", { state: "failed" }, { "idempotency-key": "k".repeat(300) });
    expect(tooLong.status).toBe(400);
    expect((await t.finality.getJob({ provider: "acme", id: "j2" }))?.state).toBe("pending");
    expect(await t.finality.jobEvents({ provider: "acme", id: "j2" })).toHaveLength(1);
  });

  it("answer 405 with the right Allow for the wrong method on each job path", async () => {
    for (const [method, path, allow] of [
      ["PUT", "/v1/jobs/acme/x/observations", "POST"],
      ["GET", "/v1/jobs/acme/x/observations", "POST"],
      ["GET", "/v1/jobs/acme/x/replay-effects", "POST"],
      ["POST", "/v1/jobs/acme/x/events", "GET, HEAD"],
      ["POST", "/v1/jobs/acme/x", "GET, HEAD"],
      ["DELETE", "/v1/jobs/acme/x", "GET, HEAD"],
    ] as const) {
      const response = await t.app.request(path, { method });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.get("allow"), `${method} ${path}`).toBe(allow);
    }
    // An id that itself ends in a suffix is sent encoded.
    await t.finality.register({ provider: "acme", id: "a/observations" });
    const job = await t.app.request("/v1/jobs/acme/a%2Fobservations");
    expect(await job.json()).toMatchObject({ id: "a/observations" });
  });

  it("are refused for an unknown provider and for the runs provider", async () => {
    expect((await observe("nobody/j", { state: "failed" })).status).toBe(404);
    expect((await observe("runs/r1", { state: "failed" })).status).toBe(400);
  });
});
