import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AnthropicFake } from "../fakes/anthropic-fake.js";
import { session } from "../fakes/anthropic-fixtures.js";
import { GeminiFake } from "../fakes/gemini-fake.js";
import { geminiBatch } from "../fakes/gemini-fixtures.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { OpenAIFake } from "../fakes/openai-fake.js";
import { openaiResponse } from "../fakes/openai-fixtures.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { type ProviderApp, providerApp } from "./helpers/provider-app.js";

// Thin webhooks (type + id) during provider lag: the event says the job ended, and the follow-up
// fetch still sees it open, or not at all (404). Recording that answer used up the delivery id
// with the older state (the redelivery was then a duplicate: the completion was gone), and a 404
// settled the job from the type alone, empty for good. Now both are a retryable 5xx that records
// nothing, and the sender's redelivery of the same id, once the provider caught up, settles it.

const openai = new OpenAIFake();
const gemini = new GeminiFake();
const anthropic = new AnthropicFake();
let restoreFetch: () => void;
let app: ProviderApp;
let bases: { openai: string; gemini: string; anthropic: string };

beforeAll(async () => {
  restoreFetch = loopbackOnly();
  bases = {
    openai: `${await openai.listen()}/v1`,
    gemini: await gemini.listen(),
    anthropic: await anthropic.listen(),
  };
});
afterAll(async () => {
  await Promise.all([openai.close(), gemini.close(), anthropic.close()]);
  restoreFetch();
});
beforeEach(async () => {
  app = await providerApp({
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

const LAG = { status: 500, body: { code: "internal", retryable: true, reason: "provider-lag" } };

async function expectNothingRecorded(provider: string, id: string): Promise<void> {
  expect(await app.finality.getJob({ provider, id })).toBeNull();
  expect(await app.finality.jobEvents({ provider, id })).toEqual([]);
}

describe("OpenAI", () => {
  it("response.completed while the response is still in_progress: 5xx, then the redelivery settles it with its result", async () => {
    openai.set(openaiResponse("resp_lag", "in_progress"));
    const delivery = openai.webhook(SECRET, "response.completed", "resp_lag", { id: "wh_lag_1" });
    expect(await app.post("openai", delivery)).toMatchObject(LAG);
    await expectNothingRecorded("openai", "resp_lag");
    openai.set(openaiResponse("resp_lag", "completed"));
    expect(await app.post("openai", delivery)).toMatchObject({ status: 200, body: { state: "succeeded" } });
    expect(await app.job("openai", "resp_lag")).toMatchObject({ result: { status: "completed" } });
  });

  it("response.completed while the response is not found yet (404): 5xx, not settled empty", async () => {
    const delivery = openai.webhook(SECRET, "response.completed", "resp_404", { id: "wh_404_1" });
    expect(await app.post("openai", delivery)).toMatchObject(LAG);
    await expectNothingRecorded("openai", "resp_404");
    openai.set(openaiResponse("resp_404", "completed"));
    expect(await app.post("openai", delivery)).toMatchObject({ status: 200, body: { state: "succeeded" } });
    expect(await app.job("openai", "resp_404")).toMatchObject({ result: { status: "completed" } });
  });

  it("a fetch that finds another terminal state is applied as the provider's own word", async () => {
    openai.set(openaiResponse("resp_other", "failed"));
    const delivery = openai.webhook(SECRET, "response.completed", "resp_other");
    expect(await app.post("openai", delivery)).toMatchObject({ status: 200, body: { state: "failed" } });
  });
});

describe("Gemini", () => {
  it("batch.succeeded while the batch is still running: 5xx, then the redelivery settles it", async () => {
    gemini.set("batches/lag", geminiBatch("batches/lag", "BATCH_STATE_RUNNING"));
    const delivery = gemini.webhook(SECRET, "batch.succeeded", { id: "batches/lag" }, { id: "wh_g_lag" });
    expect(await app.post("gemini", delivery)).toMatchObject(LAG);
    await expectNothingRecorded("gemini", "batches/lag");
    gemini.set("batches/lag", geminiBatch("batches/lag", "BATCH_STATE_SUCCEEDED"));
    expect(await app.post("gemini", delivery)).toMatchObject({ status: 200, body: { state: "succeeded" } });
  });

  it("batch.succeeded for a batch not found yet (404): 5xx, not settled empty", async () => {
    const delivery = gemini.webhook(SECRET, "batch.succeeded", { id: "batches/missing" });
    expect(await app.post("gemini", delivery)).toMatchObject(LAG);
    await expectNothingRecorded("gemini", "batches/missing");
  });
});

describe("Anthropic", () => {
  it("session.status_terminated while the session still reads running: 5xx, then the redelivery settles it", async () => {
    await app.register("anthropic", "sesn_lag", { kind: "session" });
    anthropic.setSession(session("sesn_lag", "running"));
    const delivery = anthropic.webhook(SECRET, "session.status_terminated", "sesn_lag", { id: "wh_a_lag" });
    expect(await app.post("anthropic", delivery)).toMatchObject(LAG);
    expect((await app.job("anthropic", "sesn_lag")).state).toBe("pending");
    anthropic.setSession(session("sesn_lag", "terminated"));
    expect(await app.post("anthropic", delivery)).toMatchObject({ status: 200, body: { state: "failed" } });
  });

  it("a session webhook for a session not found (404): 5xx, the registered job left open", async () => {
    await app.register("anthropic", "sesn_gone", { kind: "session" });
    const delivery = anthropic.webhook(SECRET, "session.status_idled", "sesn_gone");
    expect(await app.post("anthropic", delivery)).toMatchObject(LAG);
    expect((await app.job("anthropic", "sesn_gone")).state).toBe("pending");
  });
});
