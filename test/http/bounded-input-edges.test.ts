import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TIMESTAMP_BOUNDS } from "../../src/core/bounds.js";
import { LIMITS } from "../../src/core/validation.js";
import { fuzzApp } from "../fuzz/fuzz-app.js";
import { engineOf } from "../helpers/engine.js";
import { makeEvent, makeJob } from "../helpers/records.js";

// The API's observation route and the workers' callbacks: an oversized result or output never
// costs the state, and a timestamp outside the years 2000-2200 is a typed 400 that changes
// nothing. The body limit (1 MB here, the default) is a separate, earlier limit.

const BODY_LIMIT = 1_048_576;
const OVER_RESULT_LIMIT = LIMITS.resultBytes + 80 * 1024;
const deepText = (depth = 5_000) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

let t: Awaited<ReturnType<typeof fuzzApp>>;
beforeEach(async () => {
  t = await fuzzApp({ bodyLimitBytes: BODY_LIMIT });
});
afterEach(() => t.close());

const json = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

describe("POST /v1/jobs/:provider/:id/observations", () => {
  it("a result over 512 KB is applied, cut and marked (it was a 413 that cost the caller the state)", async () => {
    const response = await t.app.request(
      "/v1/jobs/acme/api-big/observations",
      json({ state: "succeeded", result: "r".repeat(OVER_RESULT_LIMIT) }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      outcome: "applied",
      job: { state: "succeeded", result: { truncated: true, reason: "too-large" } },
    });
    const events = await t.finality.jobEvents({ provider: "acme", id: "api-big" });
    expect(events.at(-1)?.detail).toMatchObject({ truncated: ["result"] });
  });

  it("an error nested 5,000 levels deep is applied, cut and marked", async () => {
    const response = await t.app.request(
      "/v1/jobs/acme/api-deep/observations",
      json(`{"state":"failed","error":${deepText()}}`),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      job: { state: "failed", error: { truncated: true, reason: "too-deep" } },
    });
  });

  it.each([
    ["a number past Date's range", 1e20],
    ["the first millisecond after 2200", TIMESTAMP_BOUNDS.maxMs + 1],
    ["the last millisecond before 2000", TIMESTAMP_BOUNDS.minMs - 1],
    ["an ISO date in 2201", "2201-01-01T00:00:00Z"],
  ])("updateTime as %s is a typed 400 that changes nothing", async (_name, updateTime) => {
    const key = { provider: "acme", id: "api-time" };
    await engineOf(t.finality).ingestTrusted({
      ...key,
      state: "running",
      source: "webhook",
      updateTime: Date.UTC(2026, 0, 1),
    });
    const before = await t.finality.jobEvents(key);
    const response = await t.app.request(
      "/v1/jobs/acme/api-time/observations",
      json({ state: "running", updateTime }),
    );
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    expect(await response.json()).toMatchObject({ code: "invalid-observation", field: "updateTime" });
    expect(await t.finality.jobEvents(key)).toEqual(before);
    expect((await t.finality.getJob(key))?.maxUpdateTime).toBe(Date.UTC(2026, 0, 1));
  });

  it.each([TIMESTAMP_BOUNDS.minMs, TIMESTAMP_BOUNDS.maxMs])(
    "updateTime %i, at a bound, is accepted",
    async (updateTime) => {
      const response = await t.app.request(
        `/v1/jobs/acme/api-at-${updateTime}/observations`,
        json({ state: "running", updateTime }),
      );
      expect(response.status).toBe(200);
    },
  );
});

describe("worker callbacks", () => {
  async function claimed(): Promise<{ attemptId: string; runId: string }> {
    const created = await t.app.request("/v1/runs", json({ kind: "render" }));
    expect(created.status).toBe(201);
    const claim = await t.app.request("/v1/workers/w1/claim", json({}));
    const body = (await claim.json()) as { attempt: { id: string }; run: { id: string } };
    return { attemptId: body.attempt.id, runId: body.run.id };
  }

  it("a `succeeded` whose output is over 512 KB settles the run, the output cut and marked", async () => {
    const { attemptId, runId } = await claimed();
    const response = await t.app.request(
      `/v1/attempts/${attemptId}/events`,
      json({ generation: 1, sequence: 1, type: "succeeded", output: "o".repeat(OVER_RESULT_LIMIT) }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ outcome: "applied", runStatus: "succeeded" });
    const run = await (await t.app.request(`/v1/runs/${runId}`)).json();
    expect(run).toMatchObject({ status: "succeeded", output: { truncated: true, reason: "too-large" } });
    expect((await t.finality.getJob({ provider: "runs", id: runId }))?.state).toBe("succeeded");
  });

  it("a `failed` whose error nests 5,000 levels deep ends the attempt, the error cut and marked", async () => {
    const { attemptId } = await claimed();
    const response = await t.app.request(
      `/v1/attempts/${attemptId}/events`,
      json(`{"generation":1,"sequence":1,"type":"failed","error":${deepText()}}`),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ outcome: "applied", attemptStatus: "failed" });
  });

  it("a callback carries no timestamp of its own: one sent is refused (400) and changes nothing", async () => {
    const { attemptId } = await claimed();
    const response = await t.app.request(
      `/v1/attempts/${attemptId}/events`,
      json({ generation: 1, sequence: 1, type: "succeeded", updateTime: 1e20 }),
    );
    expect(response.status).toBe(400);
    const again = await t.app.request(
      `/v1/attempts/${attemptId}/events`,
      json({ generation: 1, sequence: 1, type: "succeeded" }),
    );
    expect(await again.json()).toMatchObject({ outcome: "applied" });
  });
});

describe("the dashboard on a database written before timestamps were bounded", () => {
  it("a job whose stored updateTime no Date can hold still renders (it was a 500 forever)", async () => {
    const key = { provider: "acme", id: "legacy" };
    await engineOf(t.finality).store.transaction(async (tx) => {
      await tx.insertJob(makeJob({ ...key, state: "running", maxUpdateTime: 1e20 }));
      await tx.appendEvent(makeEvent({ ...key, detail: { updateTime: 1e300 } }));
    });
    const response = await t.app.request("/jobs/acme/legacy");
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain("100000000000000000000 ms (out of range)");
    expect(page).toContain("1e+300 ms (out of range)");
  });
});
