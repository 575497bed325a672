import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJsonPath } from "../../src/providers/generic/json-path.js";
import { FakeServer, header } from "../fakes/fake-server.js";
import { standardWebhook } from "../fakes/webhook-delivery.js";
import { type ProviderApp, providerApp } from "./helpers/provider-app.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** Somebody's own job API, in its own shape: `{data: {job: {...}}}` with its own state names. */
const jobs = new Map<string, Record<string, unknown>>();
const api = new FakeServer(
  (request) => {
    const match = /^\/api\/jobs\/([^/]+)$/.exec(request.path);
    const job = match ? jobs.get(decodeURIComponent(match[1] as string)) : undefined;
    return job ? { status: 200, body: { data: { job } } } : null;
  },
  (request) =>
    header(request, "authorization") === "Token abc" ? null : { status: 403, body: { error: "forbidden" } },
  () => ({ error: "no such job" }),
);

let app: ProviderApp;
beforeAll(async () => {
  await api.listen();
  app = await providerApp({
    mine: {
      type: "generic",
      webhook: { secrets: [SECRET] },
      poll: {
        url: `${api.url}/api/jobs/{id}`,
        headers: { authorization: "Token abc" },
        paths: {
          id: "data.job.ref",
          state: "data.job.phase",
          seq: "data.job.revision",
          updateTime: "data.job.modified",
          result: "data.job.artifacts[0]",
          error: "data.job.problem",
        },
      },
      states: { QUEUED: "pending", WORKING: "running", DONE: "succeeded", BROKEN: "failed" },
    },
  });
});
afterAll(async () => {
  await app.close();
  await api.close();
});

describe("generic polling with JSON paths and a state table", () => {
  it("reads `a.b[0].c` paths and nothing else", () => {
    const value = { a: { b: [{ c: 1 }] }, d: "x" };
    expect(readJsonPath(value, "a.b[0].c")).toBe(1);
    expect(readJsonPath(value, "$.a.b.0.c")).toBe(1);
    expect(readJsonPath(value, "a.constructor")).toBeUndefined();
    expect(readJsonPath(value, "d.length")).toBeUndefined();
  });

  it("settles a job from the API's own shape, with its URL-encoded id", async () => {
    jobs.set("render/42", {
      ref: "render/42",
      phase: "DONE",
      revision: 7,
      modified: 1767225600,
      artifacts: [{ url: "s3://bucket/render-42.mp4" }],
      problem: null,
    });
    await app.register("mine", "render/42");
    await app.reconciler.runOnce();
    expect(await app.job("mine", "render/42")).toMatchObject({
      state: "succeeded",
      settledBy: "reconcile",
      result: { url: "s3://bucket/render-42.mp4" },
    });
    expect(api.seen.at(-1)?.path).toBe("/api/jobs/render%2F42");
  });

  it("keeps a state the table does not list as unknown (recorded, not applied)", async () => {
    jobs.set("odd-1", { ref: "odd-1", phase: "ON_HOLD", revision: 1 });
    await app.register("mine", "odd-1");
    await app.reconciler.runOnce();
    const events = await app.finality.jobEvents({ provider: "mine", id: "odd-1" });
    expect(events.at(-1)).toMatchObject({ rawState: "ON_HOLD", applied: false, reason: "unknown-state" });
    expect(await app.job("mine", "odd-1")).toMatchObject({ state: "pending" });
  });

  it("maps the same names on webhooks", async () => {
    const delivery = standardWebhook(SECRET, { jobId: "hooked-1", state: "BROKEN", error: { why: "disk" } });
    expect(await app.post("mine", delivery)).toMatchObject({ status: 200, body: { state: "failed" } });
  });
});
