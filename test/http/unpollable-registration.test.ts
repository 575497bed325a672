import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineOf } from "../helpers/engine.js";
import { type InProcess, inProcessApp } from "./helpers/in-process.js";
import { SECRET } from "./helpers/webhooks.js";

// Issue #33.13: an OpenAI job registered as "abc" was accepted (201), then every poll failed with
// "set its kind" and the overview showed nothing wrong. A job the provider's poller cannot reach
// is refused at registration, naming what it expects; a kind that tells the poller is enough.

const base = "http://127.0.0.1:9";
let t: InProcess;
beforeAll(async () => {
  t = await inProcessApp({
    providers: {
      oa: { type: "openai", baseUrl: base, apiKey: "sk-test", webhook: { secrets: [SECRET] } },
      an: { type: "anthropic", baseUrl: base, apiKey: "sk-ant-test", webhook: { secrets: [SECRET] } },
      gm: { type: "gemini", baseUrl: base, apiKey: "g-test", webhook: { secrets: [SECRET] } },
      rp: { type: "replicate", baseUrl: base, apiKey: "r8-test", webhook: { secrets: [SECRET] } },
    },
  });
});
afterAll(() => t.close());

const register = (body: Record<string, unknown>) =>
  t.app.request("/v1/jobs", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

const REFUSED: [string, string, string | undefined, RegExp][] = [
  ["oa", "abc", undefined, /"resp_" or "batch_".*kind "response" or "batch"/],
  ["oa", "abc", "summarise", /"resp_" or "batch_"/],
  ["an", "abc", undefined, /"msgbatch_" or "sesn_"/],
  ["gm", "abc", undefined, /"batches\/", "operations\/" or "interactions\/"/],
  ["gm", "batches/../x", undefined, /not a Gemini resource name/],
];

const ACCEPTED: [string, string, string | undefined][] = [
  ["oa", "resp_1", undefined],
  ["oa", "batch_1", undefined],
  ["oa", "abc-response", "response"],
  ["an", "msgbatch_1", undefined],
  ["an", "abc-session", "session"],
  ["gm", "batches/x", undefined],
  ["gm", "abc-operation", "operation"],
  ["rp", "anything-1", undefined],
];

describe("registering a job its provider cannot poll", () => {
  it.each(REFUSED)(
    "%s/%s (kind %s): 400 naming the expected prefixes, nothing stored",
    async (provider, id, kind, message) => {
      const response = await register({ provider, id, ...(kind === undefined ? {} : { kind }) });
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toContain("application/problem+json");
      const problem = (await response.json()) as { code: string; field: string; detail: string };
      expect(problem).toMatchObject({ code: "invalid-request", field: "id" });
      expect(problem.detail).toMatch(message);
      expect(await t.finality.getJob({ provider, id })).toBeNull();
      expect(await t.finality.jobEvents({ provider, id })).toEqual([]);
    },
  );

  it.each(ACCEPTED)("%s/%s (kind %s): 201", async (provider, id, kind) => {
    const response = await register({ provider, id, ...(kind === undefined ? {} : { kind }) });
    expect(response.status).toBe(201);
  });

  it("attaching an intent to such an id is refused the same way, the intent left open", async () => {
    await t.finality.recordIntent({ provider: "oa", key: "order-unpollable" });
    await expect(t.finality.attachIntent("order-unpollable", "abc")).rejects.toMatchObject({
      code: "invalid-request",
      details: { field: "id" },
    });
    expect((await t.finality.getIntent("order-unpollable"))?.jobId).toBeNull();
    const { store } = engineOf(t.finality);
    expect(await store.getJob({ provider: "oa", id: "abc" })).toBeNull();
  });

  it("a job already settled under such an id registers (nothing left to poll); an open one is still refused", async () => {
    await t.finality.ingest({ provider: "oa", id: "abc-settled", state: "succeeded", source: "api" });
    await t.finality.ingest({ provider: "oa", id: "abc-open", state: "running", source: "api" });
    expect((await register({ provider: "oa", id: "abc-settled" })).status).toBe(200);
    expect(await t.finality.getJob({ provider: "oa", id: "abc-settled" })).toMatchObject({
      state: "succeeded",
      registered: true,
    });
    expect((await register({ provider: "oa", id: "abc-open" })).status).toBe(400);
  });
});
