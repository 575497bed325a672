import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { providerSchema } from "../../src/config/provider-config-schema.js";
import { createFalLister } from "../../src/providers/fal/fal-list.js";
import { FAL_JWKS_REFRESH_COOLDOWN_MS } from "../../src/providers/fal/fal-webhook.js";
import { createProviderHealth } from "../../src/providers/provider-health.js";
import { createStatusClient } from "../../src/providers/status-client.js";
import { testWebhookUnavailable } from "../../src/providers/test-webhook.js";
import type { ReceivedWebhookHeaders } from "../../src/webhooks/signature-common.js";
import { FalFake, type FalRequest } from "../fakes/fal-fake.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import type { SignedDelivery } from "../fakes/webhook-delivery.js";
import { adapterFor, pollOnce } from "./helpers/adapter.js";
import { sweep } from "./helpers/lister-contract.js";
import { type ProviderApp, providerApp } from "./helpers/provider-app.js";

const fake = new FalFake();
let base: string;
let restoreFetch: () => void;

beforeAll(async () => {
  restoreFetch = loopbackOnly();
  base = await fake.listen();
});
afterAll(async () => {
  await fake.close();
  restoreFetch();
});

const ENDPOINT = "fal-ai/flux/dev";
const config = (extra: Record<string, unknown> = {}) => ({
  type: "fal",
  baseUrl: base,
  platformBaseUrl: `${base}/v1`,
  apiKey: fake.apiKey,
  app: ENDPOINT,
  webhook: { jwksUrl: fake.jwksUrl },
  ...extra,
});

const request = (id: string, status: FalRequest["status"], extra: Partial<FalRequest> = {}): FalRequest => ({
  id,
  endpoint: ENDPOINT,
  status,
  sentAt: new Date(Date.now() - 60_000).toISOString(),
  ...(status === "COMPLETED" ? { payload: { images: [{ url: "https://fal.media/a.png" }], seed: 42 } } : {}),
  ...extra,
});

const okBody = (id: string) => ({
  request_id: id,
  gateway_request_id: id,
  status: "OK",
  payload: { images: [{ url: "https://fal.media/files/x.png", content_type: "image/png" }], seed: 7 },
});

/** A delivery's headers as the webhook route reads them. */
function received(delivery: SignedDelivery): ReceivedWebhookHeaders {
  const headers = new Headers(delivery.headers);
  return { id: null, timestamp: null, signature: null, get: (name) => headers.get(name) };
}

describe("fal polling: status, then the result once COMPLETED", () => {
  it.each([
    ["IN_QUEUE", "pending"],
    ["IN_PROGRESS", "running"],
  ] as const)("%s → %s", async (status, state) => {
    fake.set(request(`r_${status}`, status));
    expect(await pollOnce(adapterFor("fal", config()), `r_${status}`)).toMatchObject({
      kind: "observed",
      observation: { state, rawState: status, kind: ENDPOINT },
    });
  });

  it("COMPLETED with a result is succeeded, the output its result; the sub-path is not in the URL", async () => {
    fake.set(request("r_done", "COMPLETED"));
    const before = fake.server.seen.length;
    expect(await pollOnce(adapterFor("fal", config()), "r_done")).toMatchObject({
      observation: { state: "succeeded", rawState: "COMPLETED", result: { seed: 42 } },
    });
    expect(fake.server.seen.slice(before).map((seen) => seen.path)).toEqual([
      "/fal-ai/flux/requests/r_done/status",
      "/fal-ai/flux/requests/r_done",
    ]);
  });

  it("COMPLETED with an error (a request error) is failed without asking for the result", async () => {
    fake.set(
      request("r_timeout", "COMPLETED", { error: { message: "Request timed out", type: "request_timeout" } }),
    );
    expect(await pollOnce(adapterFor("fal", config()), "r_timeout")).toMatchObject({
      observation: {
        state: "failed",
        error: { message: "Request timed out", error_type: "request_timeout" },
      },
    });
  });

  it("COMPLETED whose result answers 422 (the model refused the input) is failed", async () => {
    fake.set(request("r_422", "COMPLETED", { resultStatus: 422 }));
    expect(await pollOnce(adapterFor("fal", config()), "r_422")).toMatchObject({
      observation: { state: "failed", error: { status: 422 } },
    });
  });

  it("COMPLETED whose result answers 503 is a failed poll, retried: no state is guessed", async () => {
    fake.set(request("r_503", "COMPLETED", { resultStatus: 503 }));
    expect(await pollOnce(adapterFor("fal", config()), "r_503")).toMatchObject({
      kind: "failed",
      status: 503,
    });
  });

  it("the job's kind names the endpoint; without one and without `app`, the poll says so", async () => {
    fake.set({ ...request("r_other", "IN_PROGRESS"), endpoint: "fal-ai/kling-video/v2/master" });
    const noApp = adapterFor("fal", config({ app: undefined }));
    expect(await pollOnce(noApp, "r_other", { kind: "fal-ai/kling-video/v2/master" })).toMatchObject({
      observation: { state: "running", kind: "fal-ai/kling-video/v2/master" },
    });
    expect(await pollOnce(noApp, "r_other")).toMatchObject({ kind: "failed", error: /set its kind/ });
  });

  it("sends Authorization: Key; without a key it cannot poll but still takes webhooks", async () => {
    fake.set(request("r_auth", "IN_QUEUE"));
    await pollOnce(adapterFor("fal", config()), "r_auth");
    expect(fake.server.seen.at(-1)?.headers.authorization).toBe(`Key ${fake.apiKey}`);
    const webhooksOnly = adapterFor("fal", { type: "fal", webhook: { jwksUrl: fake.jwksUrl } });
    expect(webhooksOnly.poller).toBeNull();
    expect(webhooksOnly.lister).toBeUndefined();
  });
});

describe("fal webhook signatures (Ed25519 against the JWKS)", () => {
  it("takes what fal signs; refuses a forged key, a changed body, a stale timestamp, another account", async () => {
    const adapter = adapterFor("fal", config({ webhook: { jwksUrl: fake.jwksUrl, userIds: [fake.userId] } }));
    const verify = (delivery: SignedDelivery) =>
      Promise.resolve().then(() =>
        adapter.receiver.verify(new TextEncoder().encode(delivery.body), received(delivery)),
      );
    await expect(verify(fake.webhook(okBody("r_sig")))).resolves.toMatchObject({
      id: "r_sig",
      bodySigned: true,
    });
    await expect(verify(fake.webhook(okBody("r_sig"), { key: FalFake.strangerKey() }))).rejects.toMatchObject(
      {
        code: "signature-invalid",
        details: { reason: "no-matching-signature" },
      },
    );
    const changed = fake.webhook(okBody("r_sig"));
    await expect(verify({ ...changed, body: changed.body.replace('"OK"', '"ERROR"') })).rejects.toMatchObject(
      {
        details: { reason: "no-matching-signature" },
      },
    );
    const old = fake.webhook(okBody("r_sig"), { timestampSeconds: Math.floor(Date.now() / 1000) - 600 });
    await expect(verify(old)).rejects.toMatchObject({ details: { reason: "timestamp-too-old" } });
    await expect(verify(fake.webhook(okBody("r_sig"), { userId: "someone_else" }))).rejects.toMatchObject({
      details: { reason: "no-matching-signature" },
    });
    const { "x-fal-webhook-signature": _, ...unsigned } = fake.webhook(okBody("r_sig")).headers;
    await expect(verify({ body: "{}", headers: unsigned })).rejects.toMatchObject({
      details: { reason: "missing-headers" },
    });
  });

  it("caches the key set; a rotation is picked up by one fetch, not one per delivery", async () => {
    let now = Date.now();
    const adapter = adapterFor("fal", config(), { now: () => now });
    const verify = (delivery: SignedDelivery) =>
      adapter.receiver.verify(new TextEncoder().encode(delivery.body), received(delivery));
    const start = fake.jwksCalls;
    await verify(fake.webhook(okBody("r_rot1")));
    await verify(fake.webhook(okBody("r_rot2")));
    expect(fake.jwksCalls - start).toBe(1);
    // Forged deliveries right after a fetch do not make fetches.
    await expect(verify(fake.webhook(okBody("r_forged"), { key: FalFake.strangerKey() }))).rejects.toThrow();
    expect(fake.jwksCalls - start).toBe(1);
    fake.rotate();
    now += FAL_JWKS_REFRESH_COOLDOWN_MS + 1000;
    const fresh = fake.webhook(okBody("r_rot3"), { timestampSeconds: Math.floor(now / 1000) });
    await expect(verify(fresh)).resolves.toMatchObject({ id: "r_rot3" });
    expect(fake.jwksCalls - start).toBe(2);
  });

  it("an unreachable key set: 5xx (fal retries) with no keys yet; the cached keys once it has some", async () => {
    let now = Date.now();
    const adapter = adapterFor("fal", config({ webhook: { jwksUrl: fake.jwksUrl, jwksCacheSeconds: 60 } }), {
      now: () => now,
    });
    const verify = (delivery: SignedDelivery) =>
      adapter.receiver.verify(new TextEncoder().encode(delivery.body), received(delivery));
    fake.server.failNext = { status: 503, count: 1 };
    await expect(verify(fake.webhook(okBody("r_down")))).rejects.toMatchObject({
      code: "internal",
      details: { reason: "jwks-unavailable" },
    });
    await verify(fake.webhook(okBody("r_down")));
    // jwksCacheSeconds: 60, so two minutes on the set is fetched again; it fails, the old keys serve.
    now += 120_000;
    fake.server.failNext = { status: 503, count: 1 };
    const calls = fake.jwksCalls;
    const later = fake.webhook(okBody("r_down2"), { timestampSeconds: Math.floor(now / 1000) });
    await expect(verify(later)).resolves.toMatchObject({ id: "r_down2" });
    expect(fake.jwksCalls).toBe(calls + 1);
    expect(fake.server.failNext).toBeNull();
  });

  it("does not follow a redirect from the key set's URL", async () => {
    const adapter = adapterFor("fal", config({ webhook: { jwksUrl: `${base}/moved/jwks.json` } }));
    const delivery = fake.webhook(okBody("r_moved"));
    await expect(
      Promise.resolve(adapter.receiver.verify(new TextEncoder().encode(delivery.body), received(delivery))),
    ).rejects.toMatchObject({ details: { reason: "jwks-unavailable" } });
  });

  it("toleranceSeconds reaches the timestamp check", async () => {
    const adapter = adapterFor("fal", config({ webhook: { jwksUrl: fake.jwksUrl, toleranceSeconds: 900 } }));
    const old = fake.webhook(okBody("r_tol"), { timestampSeconds: Math.floor(Date.now() / 1000) - 600 });
    await expect(
      Promise.resolve(adapter.receiver.verify(new TextEncoder().encode(old.body), received(old))),
    ).resolves.toMatchObject({ id: "r_tol" });
    expect(() =>
      adapter.receiver.checkHeaders?.(received(fake.webhook(okBody("r_tol"), { timestampSeconds: 1 }))),
    ).toThrow(/too old/);
  });
});

describe("fal end to end", () => {
  let app: ProviderApp;
  beforeAll(async () => {
    app = await providerApp({ fal: config() });
  });
  afterAll(() => app.close());

  it("settles from the webhook's payload without a fetch; a re-send is a duplicate", async () => {
    const polls = fake.server.seen.filter((seen) => seen.path.includes("/requests/")).length;
    const delivery = fake.webhook(okBody("r_hook"));
    expect(await app.post("fal", delivery)).toMatchObject({
      status: 200,
      body: { outcome: "applied", state: "succeeded" },
    });
    expect(await app.post("fal", delivery)).toMatchObject({
      status: 200,
      body: { outcome: "duplicate-delivery" },
    });
    expect(await app.job("fal", "r_hook")).toMatchObject({
      state: "succeeded",
      settledBy: "webhook",
      result: { seed: 7 },
    });
    expect(fake.server.seen.filter((seen) => seen.path.includes("/requests/")).length).toBe(polls);
  });

  it("an ERROR webhook fails the job with fal's message and details", async () => {
    const body = {
      request_id: "r_err",
      gateway_request_id: "r_err",
      status: "ERROR",
      error: "Invalid status code: 422",
      payload: { detail: [{ loc: ["body", "prompt"], msg: "field required", type: "value_error.missing" }] },
    };
    expect(await app.post("fal", fake.webhook(body))).toMatchObject({
      status: 200,
      body: { state: "failed" },
    });
    expect(await app.job("fal", "r_err")).toMatchObject({ error: { message: "Invalid status code: 422" } });
  });

  it("refuses a body whose request_id is not the signed header's (400), and a forged one (401)", async () => {
    const mismatched = fake.webhook(okBody("r_body"), { requestId: "r_header" });
    expect(await app.post("fal", mismatched)).toMatchObject({ status: 400 });
    const forged = fake.webhook(okBody("r_forged2"), { key: FalFake.strangerKey() });
    expect(await app.post("fal", forged)).toMatchObject({ status: 401 });
  });

  it("settles a request whose webhook was lost, on reconcile", async () => {
    fake.set(request("r_lost", "COMPLETED"));
    await app.register("fal", "r_lost", { kind: ENDPOINT });
    await app.reconciler.runOnce();
    expect(await app.job("fal", "r_lost")).toMatchObject({
      state: "succeeded",
      settledBy: "reconcile",
      result: { seed: 42 },
    });
  });

  it("refuses to register a job it could never poll (no endpoint in kind nor `app`)", async () => {
    const bare = await providerApp({ fal: config({ app: undefined }) });
    await expect(bare.register("fal", "r_nokind")).rejects.toThrow(/fal job must have its endpoint id/);
    await bare.register("fal", "r_kind", { kind: ENDPOINT });
    await bare.close();
  });
});

describe("fal discovery: the Platform API's request list", () => {
  beforeEach(() => fake.requests.clear());
  const lister = () =>
    createFalLister(
      createStatusClient({
        provider: "fal",
        baseUrl: `${base}/v1`,
        headers: { authorization: `Key ${fake.apiKey}` },
        health: createProviderHealth(),
      }),
      ENDPOINT,
    );

  it("pages with next_cursor, sends the endpoint and the lookback, lists the endpoint as the kind", async () => {
    const now = Date.now();
    for (let i = 0; i < 150; i++)
      fake.set(request(`l${i}`, "COMPLETED", { sentAt: new Date(now - (i + 1) * 60_000).toISOString() }));
    fake.set({ ...request("l_other", "COMPLETED"), endpoint: "fal-ai/other" });
    fake.set(request("l_old", "COMPLETED", { sentAt: new Date(now - 72 * 3_600_000).toISOString() }));
    const since = now - 48 * 3_600_000;
    const before = fake.server.seen.length;
    const run = await sweep(lister(), null, since);
    expect(run.jobs.map((job) => job.id).sort()).toEqual(
      Array.from({ length: 150 }, (_, i) => `l${i}`).sort(),
    );
    expect(run.jobs.every((job) => job.kind === ENDPOINT)).toBe(true);
    const asked = fake.server.seen.slice(before);
    expect(asked).toHaveLength(2);
    expect(asked[0]?.query.get("endpoint_id")).toBe(ENDPOINT);
    expect(asked[0]?.query.get("start")).toBe(new Date(since).toISOString());
    expect(asked[1]?.query.get("cursor")).toBe(Buffer.from("2").toString("base64"));
  });

  it("the adapter lists only with a key and an app", () => {
    expect(adapterFor("fal", config()).lister?.kinds).toEqual([ENDPOINT]);
    expect(adapterFor("fal", config({ app: undefined })).lister).toBeUndefined();
  });
});

it("no test webhook can be signed for fal, and the refusal says why", () => {
  expect(testWebhookUnavailable("fal", providerSchema.parse(config()))).toMatch(/fal's own private keys/);
});
