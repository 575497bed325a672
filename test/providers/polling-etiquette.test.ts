import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProviderHealth } from "../../src/providers/provider-health.js";
import { createStatusClient } from "../../src/providers/status-client.js";
import { FakeServer, type SeenRequest } from "../fakes/fake-server.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { OpenAIFake } from "../fakes/openai-fake.js";
import { openaiBatch } from "../fakes/openai-fixtures.js";
import { adapterFor, pollOnce } from "./helpers/adapter.js";
import { providerApp } from "./helpers/provider-app.js";

const openai = new OpenAIFake();
/** Where a redirect points: it must never see the API key. */
const elsewhere = new FakeServer(
  () => ({ status: 200, body: { id: "batch_1", status: "completed" } }),
  () => null,
  () => ({}),
);
let restoreFetch: () => void;

beforeAll(async () => {
  restoreFetch = loopbackOnly();
  await openai.listen();
  await elsewhere.listen();
});
afterAll(async () => {
  await openai.close();
  await elsewhere.close();
  restoreFetch();
});

const config = (apiKey = openai.apiKey) => ({ type: "openai", baseUrl: `${openai.server.url}/v1`, apiKey });

describe("answers the reconciler can act on", () => {
  it.each([
    [429, "30", { kind: "failed", status: 429, retryAfterMs: 30_000 }],
    [503, undefined, { kind: "failed", status: 503 }],
    [500, "2", { kind: "failed", status: 500, retryAfterMs: 2000 }],
  ])("%i with Retry-After %s is retryable", async (status, retryAfter, expected) => {
    openai.set(openaiBatch("batch_etiquette", "in_progress"));
    openai.server.failNext = { status, count: 1, ...(retryAfter ? { retryAfter } : {}) };
    expect(await pollOnce(adapterFor("o", config()), "batch_etiquette")).toMatchObject(expected);
  });

  it("404 is not-found (recorded on the job as an anomaly by the reconciler)", async () => {
    expect(await pollOnce(adapterFor("o", config()), "batch_nobody")).toEqual({ kind: "not-found" });
  });

  it("a timeout is a failed poll, not a crash", async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as AddressInfo;
    const client = createStatusClient({
      provider: "p",
      baseUrl: `http://127.0.0.1:${port}`,
      headers: {},
      health: createProviderHealth(),
    });
    expect(await client.get("/x", AbortSignal.timeout(100))).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("timed out"),
      url: `http://127.0.0.1:${port}/x`,
      code: "ETIMEDOUT",
    });
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  });
});

describe("the API key goes to the configured base URL only", () => {
  it("does not follow a redirect (fetch would carry the key to its target)", async () => {
    const redirecting = new FakeServer(
      () => ({ status: 302, body: {}, headers: { location: `${elsewhere.url}/v1/batches/batch_1` } }),
      () => null,
      () => ({}),
    );
    await redirecting.listen();
    const adapter = adapterFor("o", { ...config(), baseUrl: `${redirecting.url}/v1` });
    expect(await pollOnce(adapter, "batch_1")).toMatchObject({ kind: "failed", status: 302 });
    expect(elsewhere.seen).toHaveLength(0);
    await redirecting.close();
  });

  it("encodes ids, so that no id can leave the API's path", async () => {
    await pollOnce(adapterFor("o", config()), "batch_../../../admin?x=1", { kind: "batch" });
    const seen = openai.server.seen.at(-1) as SeenRequest;
    expect(seen.path).toBe("/v1/batches/batch_..%2F..%2F..%2Fadmin%3Fx%3D1");
  });

  it("refuses a Gemini name that would climb out of the API version", async () => {
    const gemini = adapterFor("g", { type: "gemini", baseUrl: openai.server.url, apiKey: "k" });
    expect(await pollOnce(gemini, "batches/../../elsewhere")).toMatchObject({ kind: "failed" });
  });
});

describe("a refused API key is a configuration error, reported once per provider", () => {
  it("flags the provider on 401/403 and clears the flag on the next good answer", async () => {
    const health = createProviderHealth();
    const reports: string[] = [];
    health.onAuthFailure((provider) => reports.push(provider));
    openai.set(openaiBatch("batch_auth", "in_progress"));
    const wrong = adapterFor("openai-prod", config("sk-wrong"), { health });
    for (let i = 0; i < 3; i++)
      expect(await pollOnce(wrong, "batch_auth")).toMatchObject({ kind: "failed", status: 401 });
    expect(reports).toEqual(["openai-prod"]);
    expect(health.authFailures().get("openai-prod")).toMatchObject({ status: 401, count: 3 });
    await pollOnce(adapterFor("openai-prod", config(), { health }), "batch_auth");
    expect(health.authFailures().size).toBe(0);
  });

  it("the service logs it once, however many jobs fail on it", async () => {
    const app = await providerApp({ openai: config("sk-wrong") });
    for (const id of ["batch_a1", "batch_a2", "batch_a3"]) await app.register("openai", id);
    await app.reconciler.runOnce();
    const errors = app.logs.filter((line) => line.level === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ fields: { provider: "openai", status: 401, configError: true } });
    expect(app.health.authFailures().has("openai")).toBe(true);
    await app.close();
  });
});
