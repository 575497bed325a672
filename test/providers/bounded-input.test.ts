import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { LIMITS } from "../../src/core/validation.js";
import { AnthropicFake } from "../fakes/anthropic-fake.js";
import { anthropicWebhookEvent } from "../fakes/anthropic-fixtures.js";
import { FakeServer, RawJson } from "../fakes/fake-server.js";
import { GeminiFake } from "../fakes/gemini-fake.js";
import { VIDEO_OPERATION } from "../fakes/gemini-fixtures.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { OpenAIFake } from "../fakes/openai-fake.js";
import { openaiResponse } from "../fakes/openai-fixtures.js";
import { ReplicateFake } from "../fakes/replicate-fake.js";
import { prediction } from "../fakes/replicate-fixtures.js";
import { standardWebhook } from "../fakes/webhook-delivery.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { type ProviderApp, providerApp } from "./helpers/provider-app.js";

// The rule for every provider and every source: an oversized or unstorable result or error never
// costs the state. The state is applied; the value is cut to a marked stand-in; the event says so.
// Results here are over the 512 KB result limit and under the default 1 MB body limit (a separate,
// earlier limit). "Deep" is 5,000 levels: JSON.parse reads it, JSON.stringify cannot write it.

const OVER_RESULT_LIMIT = LIMITS.resultBytes + 80 * 1024;
const big = (char: string) => char.repeat(OVER_RESULT_LIMIT);
const deepText = (depth = 5_000) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
/** A RawJson where a fake's `set` wants an object (the fakes only read its routing fields). */
const rawObject = (text: string) => new RawJson(text) as unknown as Record<string, unknown>;
const sizeOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

const replicate = new ReplicateFake();
const openai = new OpenAIFake();
const gemini = new GeminiFake();
const anthropic = new AnthropicFake();
/** A status API for the generic provider: answers whatever `genericAnswers` holds for the id. */
const genericAnswers = new Map<string, unknown>();
const generic = new FakeServer(
  (request) => {
    const match = /^\/status\/(.+)$/.exec(request.path);
    const answer = match ? genericAnswers.get(decodeURIComponent(match[1] as string)) : undefined;
    return answer === undefined ? null : { status: 200, body: answer };
  },
  () => null,
  () => ({ error: "not found" }),
);
let restoreFetch: () => void;
let bases: { replicate: string; openai: string; gemini: string; generic: string; anthropic: string };

beforeAll(async () => {
  restoreFetch = loopbackOnly();
  bases = {
    replicate: `${await replicate.listen()}/v1`,
    openai: `${await openai.listen()}/v1`,
    gemini: await gemini.listen(),
    generic: await generic.listen(),
    anthropic: await anthropic.listen(),
  };
});
afterAll(async () => {
  await Promise.all([replicate.close(), openai.close(), gemini.close(), generic.close(), anthropic.close()]);
  restoreFetch();
});

let app: ProviderApp;
beforeEach(async () => {
  app = await providerApp({
    acme: { type: "generic", webhook: { secrets: [SECRET] }, poll: { url: `${bases.generic}/status/{id}` } },
    mapped: {
      type: "generic",
      webhook: { secrets: [SECRET] },
      poll: {
        url: `${bases.generic}/status/{id}`,
        paths: { state: "status", updateTime: "updated", result: "output", error: "failure" },
      },
    },
    replicate: {
      type: "replicate",
      baseUrl: bases.replicate,
      apiKey: replicate.apiKey,
      webhook: { secrets: [replicate.secret] },
    },
    openai: { type: "openai", baseUrl: bases.openai, apiKey: openai.apiKey, webhook: { secrets: [SECRET] } },
    gemini: { type: "gemini", baseUrl: bases.gemini, apiKey: gemini.apiKey, webhook: { secrets: [SECRET] } },
    anthropic: {
      type: "anthropic",
      baseUrl: bases.anthropic,
      apiKey: anthropic.apiKey,
      webhook: { secrets: [SECRET] },
    },
  });
});
afterEach(() => app.close());

async function lastEventDetail(provider: string, id: string): Promise<unknown> {
  return (await app.finality.jobEvents({ provider, id })).at(-1)?.detail;
}

describe("the generic provider: an oversized result settles the job", () => {
  it("a webhook whose result is over 512 KB (body under the body limit) settles, the result cut and marked", async () => {
    const delivery = standardWebhook(SECRET, { jobId: "g-big", state: "succeeded", result: big("r") });
    const answer = await app.post("acme", delivery);
    expect(answer).toMatchObject({ status: 200, body: { outcome: "applied", state: "succeeded" } });
    const job = await app.job("acme", "g-big");
    expect(job).toMatchObject({ state: "succeeded", result: { truncated: true, reason: "too-large" } });
    expect((job.result as { bytes: number }).bytes).toBeGreaterThan(LIMITS.resultBytes);
    expect(await lastEventDetail("acme", "g-big")).toMatchObject({ truncated: ["result"] });
  });

  it("a webhook whose error nests 5,000 levels deep settles failed, the error cut and marked", async () => {
    const body = `{"jobId":"g-deep","state":"failed","error":${deepText()}}`;
    const answer = await app.post("acme", standardWebhook(SECRET, body));
    expect(answer.status).toBe(200);
    expect(await app.job("acme", "g-deep")).toMatchObject({
      state: "failed",
      error: { truncated: true, reason: "too-deep" },
    });
  });

  it("a body over the HTTP body limit is still refused (413), before anything is read", async () => {
    const delivery = standardWebhook(SECRET, {
      jobId: "g-huge",
      state: "succeeded",
      result: "x".repeat(1_100_000),
    });
    const response = await app.app.request("/webhooks/acme", {
      method: "POST",
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(response.status).toBe(413);
    expect(await app.finality.getJob({ provider: "acme", id: "g-huge" })).toBeNull();
  });

  it("a poll answering a result over 512 KB settles the job (the poller ran the webhook's parser)", async () => {
    genericAnswers.set("p-big", { jobId: "p-big", state: "succeeded", result: big("p") });
    await app.register("acme", "p-big");
    await app.reconciler.runOnce();
    expect(await app.job("acme", "p-big")).toMatchObject({
      state: "succeeded",
      result: { truncated: true, reason: "too-large" },
    });
  });

  it("a poll read with paths whose error nests 5,000 levels deep settles failed, the error cut", async () => {
    genericAnswers.set("p-deep", new RawJson(`{"status":"failed","failure":${deepText()}}`));
    await app.register("mapped", "p-deep");
    await app.reconciler.runOnce();
    expect(await app.job("mapped", "p-deep")).toMatchObject({
      state: "failed",
      error: { truncated: true, reason: "too-deep" },
    });
  });
});

describe("named providers: unbounded fields give a bounded, stored value", () => {
  it("Replicate: a webhook whose `error` nests 5,000 levels deep settles failed (it was a 500 on every retry)", async () => {
    const text = JSON.stringify(prediction("r-deep", "failed")).replace(
      '"error":"CUDA out of memory"',
      `"error":${deepText()}`,
    );
    const answer = await app.post("replicate", standardWebhook(replicate.secret, text));
    expect(answer.status).toBe(200);
    expect(await app.job("replicate", "r-deep")).toMatchObject({
      state: "failed",
      error: { truncated: true, reason: "too-deep" },
    });
    expect(await lastEventDetail("replicate", "r-deep")).toMatchObject({ truncated: ["error"] });
  });

  it("Replicate: an error with NUL bytes and an oversized summary are stored bounded", async () => {
    const object = prediction("r-nul", "succeeded", {
      metrics: { blob: big("m") },
      error: "bad\u0000byte",
    });
    const answer = await app.post("replicate", standardWebhook(replicate.secret, object));
    expect(answer.status).toBe(200);
    const job = await app.job("replicate", "r-nul");
    expect(job.state).toBe("succeeded");
    // The summary itself (its metrics) was too large: the bare marker is kept.
    expect(job.result).toMatchObject({ truncated: true, reason: "too-large" });
    expect(sizeOf(job.result)).toBeLessThan(1024);
    expect(job.error).toEqual({ message: "bad\u0000byte" });
  });

  it("OpenAI: response.failed whose fetched `error` nests 5,000 levels deep settles failed", async () => {
    const text = JSON.stringify(openaiResponse("resp_deep", "failed")).replace(
      /"error":\{[^}]*\}/,
      `"error":${deepText()}`,
    );
    openai.set(Object.assign(rawObject(text), { id: "resp_deep", object: "response" }));
    const answer = await app.post("openai", openai.webhook(SECRET, "response.failed", "resp_deep"));
    expect(answer.status).toBe(200);
    expect(await app.job("openai", "resp_deep")).toMatchObject({
      state: "failed",
      error: { truncated: true, reason: "too-deep" },
    });
  });

  it("Gemini: a polled operation whose `error` nests 5,000 levels deep settles failed", async () => {
    const name = `${VIDEO_OPERATION}-deep`;
    gemini.set(
      name,
      rawObject(`{"name":${JSON.stringify(name)},"done":true,"error":{"code":3,"details":${deepText()}}}`),
    );
    await app.register("gemini", name, { kind: "operation" });
    await app.reconciler.runOnce();
    expect(await app.job("gemini", name)).toMatchObject({
      state: "failed",
      error: { truncated: true, reason: "too-deep" },
    });
  });
});

// Timestamps: the years 2000 to 2200 (core/bounds.ts). The generic body is the sender's own format:
// a time outside them is a typed 400 that changes nothing, and its sender sees why. A provider's
// own time (its webhook's, its status answer's) is an ordering hint, never a gate (issue 33,
// defect 6): the state applies, the time is dropped or cut to the receipt, and the event says why.

const AT_MAX = "2200-12-31T23:59:59.999Z";
const PAST_MAX = "2201-01-01T00:00:00Z";
const AT_MIN = "2000-01-01T00:00:00Z";
const BEFORE_MIN = "1999-12-31T23:59:59.999Z";

async function expectRefusedTime(provider: string, id: string, answer: { status: number; body: unknown }) {
  expect(answer.status).toBe(400);
  expect(answer.body).toMatchObject({ code: "invalid-observation", field: "updateTime" });
  expect(await app.finality.getJob({ provider, id })).toBeNull();
  expect(await app.finality.jobEvents({ provider, id })).toEqual([]);
}

describe("timestamps out of range in the generic body: refused, nothing stored", () => {
  it.each([
    [PAST_MAX, 400],
    [BEFORE_MIN, 400],
    ["9999-12-31T23:59:59Z", 400],
    [AT_MAX, 200],
    [AT_MIN, 200],
  ])("generic: updateTime %s → %i", async (updateTime, status) => {
    const id = `t-${updateTime}`;
    const answer = await app.post(
      "acme",
      standardWebhook(SECRET, { jobId: id, state: "running", updateTime }),
    );
    if (status === 400) await expectRefusedTime("acme", id, answer);
    else expect(answer).toMatchObject({ status: 200, body: { outcome: "applied" } });
  });

  it("generic: one far-future updateTime no longer poisons ordering (a later sane update applies)", async () => {
    const first = standardWebhook(SECRET, {
      jobId: "t-order",
      state: "running",
      updateTime: "2026-01-01T00:00:00Z",
    });
    expect((await app.post("acme", first)).status).toBe(200);
    const poison = standardWebhook(SECRET, {
      jobId: "t-order",
      state: "running",
      updateTime: "9999-01-01T00:00:00Z",
    });
    expect((await app.post("acme", poison)).status).toBe(400);
    const later = standardWebhook(SECRET, {
      jobId: "t-order",
      state: "running",
      updateTime: "2026-01-02T00:00:00Z",
    });
    expect(await app.post("acme", later)).toMatchObject({ status: 200, body: { outcome: "applied" } });
  });
});

/** The job's last event says which time came and why it was not used as it came. */
async function expectTimeAdjusted(provider: string, id: string, reason: string) {
  const job = await app.finality.getJob({ provider, id });
  expect(job).not.toBeNull();
  const now = Date.now();
  if (job?.maxUpdateTime !== null) expect(job?.maxUpdateTime).toBeLessThanOrEqual(now);
  const events = await app.finality.jobEvents({ provider, id });
  const adjusted = events.map(
    (e) => (e.detail as { timeAdjusted?: { reason: string } } | null)?.timeAdjusted,
  );
  expect(adjusted).toContainEqual(expect.objectContaining({ reason }));
  return job;
}

describe("a provider's webhook time out of range: the state applies, the time does not", () => {
  it("Replicate: completed_at in the year 9999", async () => {
    const object = prediction("t-rep", "succeeded", { completed_at: "9999-01-01T00:00:00Z" });
    const answer = await app.post("replicate", standardWebhook(replicate.secret, object));
    expect(answer).toMatchObject({ status: 200, body: { outcome: "applied" } });
    expect(await expectTimeAdjusted("replicate", "t-rep", "after-range")).toMatchObject({
      state: "succeeded",
    });
  });

  it("OpenAI: created_at of 10^12 seconds (the year 33658)", async () => {
    const body = {
      id: "evt_t",
      object: "event",
      created_at: 1e12,
      type: "response.cancelled",
      data: { id: "resp_t" },
    };
    openai.set(openaiResponse("resp_t", "cancelled"));
    expect((await app.post("openai", standardWebhook(SECRET, body))).status).toBe(200);
    expect(await expectTimeAdjusted("openai", "resp_t", "after-range")).toMatchObject({ state: "cancelled" });
  });

  it("Anthropic: created_at in 1970", async () => {
    const body = {
      ...anthropicWebhookEvent("session.status_run_started", "sesn_t"),
      created_at: "1970-01-02T00:00:00Z",
    };
    expect((await app.post("anthropic", standardWebhook(SECRET, body))).status).toBe(200);
    await expectTimeAdjusted("anthropic", "sesn_t", "before-range");
  });
});

describe("a time out of range in a poll answer: the state applies, the time does not", () => {
  it.each([
    [
      "replicate",
      "t-poll-rep",
      "after-range",
      () => replicate.set(prediction("t-poll-rep", "succeeded", { completed_at: PAST_MAX })),
    ],
    [
      "mapped",
      "t-poll-gen",
      "after-range",
      () => genericAnswers.set("t-poll-gen", { status: "succeeded", updated: 1e300 }),
    ],
    [
      "acme",
      "t-poll-body",
      "after-range",
      () =>
        genericAnswers.set("t-poll-body", {
          jobId: "t-poll-body",
          state: "succeeded",
          updateTime: "2999-01-01T00:00:00Z",
        }),
    ],
    [
      "replicate",
      "t-poll-1971",
      "before-range",
      () =>
        replicate.set(
          prediction("t-poll-1971", "succeeded", {
            created_at: "1971-01-01T00:00:00Z",
            started_at: null,
            completed_at: null,
          }),
        ),
    ],
  ])("%s (%s)", async (provider, id, reason, answer) => {
    answer();
    await app.register(provider, id);
    await app.reconciler.runOnce();
    const job = await expectTimeAdjusted(provider, id, reason);
    expect(job).toMatchObject({ state: "succeeded" });
  });
});
