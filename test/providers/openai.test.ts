import OpenAI, { InvalidWebhookSignatureError } from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createStandardWebhookVerifier,
  signStandardWebhook,
} from "../../src/webhooks/schemes/standard-webhooks/node.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { OpenAIFake } from "../fakes/openai-fake.js";
import { BATCH_STATUSES, openaiBatch, openaiResponse, RESPONSE_STATUSES } from "../fakes/openai-fixtures.js";
import { adapterFor, pollOnce } from "./helpers/adapter.js";
import { type ProviderApp, providerApp } from "./helpers/provider-app.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const fake = new OpenAIFake();
let base: string;
let restoreFetch: () => void;

beforeAll(async () => {
  restoreFetch = loopbackOnly();
  base = `${await fake.listen()}/v1`;
});
afterAll(async () => {
  await fake.close();
  restoreFetch();
});

const config = () => ({ type: "openai", baseUrl: base, apiKey: fake.apiKey, webhook: { secrets: [SECRET] } });

/** Written from OpenAI's documentation, not from the adapter's table (openai-states.ts). */
const RESPONSE_EXPECTED: Record<string, string> = {
  queued: "pending",
  in_progress: "running",
  completed: "succeeded",
  failed: "failed",
  cancelled: "cancelled",
  incomplete: "failed",
};
const BATCH_EXPECTED: Record<string, string> = {
  validating: "pending",
  in_progress: "running",
  finalizing: "running",
  cancelling: "running",
  completed: "succeeded",
  failed: "failed",
  expired: "expired",
  cancelled: "cancelled",
};

describe("the OpenAI fake answers what the official SDK reads", () => {
  const client = () => new OpenAI({ apiKey: fake.apiKey, baseURL: base, maxRetries: 0 });

  it.each(RESPONSE_STATUSES)("responses.retrieve: %s", async (status) => {
    fake.set(openaiResponse(`resp_sdk_${status}`, status));
    const response = await client().responses.retrieve(`resp_sdk_${status}`);
    expect(response).toMatchObject({ id: `resp_sdk_${status}`, object: "response", status });
    if (status === "completed") expect(response.output_text).toBe("hello");
  });

  it.each(BATCH_STATUSES)("batches.retrieve: %s", async (status) => {
    fake.set(openaiBatch(`batch_sdk_${status}`, status));
    const batch = await client().batches.retrieve(`batch_sdk_${status}`);
    expect(batch).toMatchObject({ id: `batch_sdk_${status}`, object: "batch", status });
  });

  it("refuses a wrong key the way OpenAI does", async () => {
    const wrong = new OpenAI({ apiKey: "sk-wrong", baseURL: base, maxRetries: 0 });
    await expect(wrong.batches.retrieve("batch_sdk_completed")).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
  });
});

describe("OpenAI polling maps every documented state", () => {
  const poll = (id: string, kind: string | null = null) =>
    pollOnce(adapterFor("openai", config()), id, { kind });

  it.each(Object.entries(RESPONSE_EXPECTED))("response %s → %s", async (status, expected) => {
    fake.set(openaiResponse(`resp_map_${status}`, status));
    const result = await poll(`resp_map_${status}`);
    expect(result).toMatchObject({
      kind: "observed",
      observation: { state: expected, rawState: status, kind: "response" },
    });
  });

  it.each(Object.entries(BATCH_EXPECTED))("batch %s → %s", async (status, expected) => {
    fake.set(openaiBatch(`batch_map_${status}`, status));
    const result = await poll(`batch_map_${status}`);
    expect(result).toMatchObject({
      kind: "observed",
      observation: { state: expected, rawState: status, kind: "batch" },
    });
  });

  it("an undocumented status is passed on raw (the reducer records it as unknown-state)", async () => {
    fake.set({ ...openaiResponse("resp_map_new", "completed"), status: "paused_for_review" });
    const result = await poll("resp_map_new");
    expect(result).toMatchObject({ kind: "observed", observation: { state: "paused_for_review" } });
  });

  it("keeps the result of a completed response and the partial output of an incomplete one", async () => {
    const done = await poll("resp_map_completed");
    const cut = await poll("resp_map_incomplete");
    expect(done).toMatchObject({
      observation: { result: { output: [{ type: "message" }], usage: { total_tokens: 17 } } },
    });
    expect(cut).toMatchObject({
      observation: {
        error: { code: "incomplete", reason: "max_output_tokens" },
        result: { output: [{ type: "message" }] },
      },
    });
  });

  it("tells the kind from the job when the id cannot (a proxy's own ids)", async () => {
    fake.set({ ...openaiBatch("custom-1", "completed") });
    expect(await poll("custom-1")).toMatchObject({ kind: "failed" });
    expect(await poll("custom-1", "batch")).toMatchObject({
      kind: "observed",
      observation: { state: "succeeded" },
    });
  });
});

describe("webhook signatures agree with openai's webhooks.unwrap", () => {
  const client = new OpenAI({ apiKey: "unused" });
  const body = JSON.stringify({
    id: "evt_1",
    object: "event",
    created_at: 1,
    type: "batch.completed",
    data: { id: "batch_1" },
  });
  // Read at each call, not once when the file loads: on a busy machine the cases run seconds later.
  const nowSeconds = () => Math.floor(Date.now() / 1000);
  const signed = (secret: string, timestampSeconds = nowSeconds()) =>
    signStandardWebhook({ id: "wh_685342e6c53c8190a1be43f081506c52", timestampSeconds, body, secret });
  const finalityAccepts = (secret: string, headers: Record<string, string>, text = body) => {
    const verifier = createStandardWebhookVerifier({ secrets: [secret], now: Date.now });
    try {
      verifier.verify(new TextEncoder().encode(text), {
        id: headers["webhook-id"],
        timestamp: headers["webhook-timestamp"],
        signature: headers["webhook-signature"],
      });
      return true;
    } catch {
      return false;
    }
  };

  it.each([
    ["a whsec_ secret", SECRET],
    ["a raw secret (its UTF-8 bytes, as OpenAI's SDK takes it)", "my-raw-secret-ünïcode"],
  ])("unwrap accepts what Finality signs with %s", async (_name, secret) => {
    const headers = { ...signed(secret) };
    await expect(client.webhooks.unwrap(body, headers, secret)).resolves.toMatchObject({
      type: "batch.completed",
    });
    expect(finalityAccepts(secret, headers)).toBe(true);
  });

  it.each([
    // A minute past the 300 s tolerance: clear of the boundary however long the run takes to get here.
    ["a timestamp older than 300 s", SECRET, () => signed(SECRET, nowSeconds() - 360), body],
    ["a timestamp too far ahead", SECRET, () => signed(SECRET, nowSeconds() + 360), body],
    ["another secret", "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD", () => signed(SECRET), body],
    ["a changed body", SECRET, () => signed(SECRET), body.replace("batch_1", "batch_2")],
  ])("both refuse %s", async (_name, secret, headersOf, text) => {
    const headers = { ...headersOf() };
    await expect(client.webhooks.unwrap(text, headers, secret)).rejects.toBeInstanceOf(
      InvalidWebhookSignatureError,
    );
    expect(finalityAccepts(secret, headers, text)).toBe(false);
  });
});

describe("OpenAI end to end", () => {
  let app: ProviderApp;
  beforeAll(async () => {
    app = await providerApp({ openai: config() });
  });
  afterAll(() => app.close());
  afterEach(() => {
    fake.server.failNext = null;
  });

  it("settles a response whose webhook was lost, on the next reconcile", async () => {
    await app.register("openai", "resp_lost");
    // It completed at OpenAI, and the webhook never arrived.
    fake.set(openaiResponse("resp_lost", "completed"));
    await app.reconciler.runOnce();
    expect(await app.job("openai", "resp_lost")).toMatchObject({
      state: "succeeded",
      settledBy: "reconcile",
      result: { output: [{ content: [{ text: "hello" }] }] },
    });
  });

  it("fetches the object on a thin webhook, and ignores its duplicate", async () => {
    fake.set(openaiBatch("batch_thin", "completed"));
    const before = fake.server.requestsTo("/v1/batches/batch_thin").length;
    const delivery = fake.webhook(SECRET, "batch.completed", "batch_thin");
    const first = await app.post("openai", delivery);
    expect(first).toMatchObject({ status: 200, body: { outcome: "applied", state: "succeeded" } });
    expect(fake.server.requestsTo("/v1/batches/batch_thin").length).toBe(before + 1);
    expect(await app.job("openai", "batch_thin")).toMatchObject({
      kind: "batch",
      result: { output_file_id: "file-out456", request_counts: { total: 100 } },
    });
    const again = await app.post("openai", delivery);
    expect(again).toMatchObject({ status: 200, body: { outcome: "duplicate-delivery", applied: false } });
  });

  it("fetches an expired or cancelled batch: the results it finished stay on the job", async () => {
    for (const [status, type] of [
      ["expired", "batch.expired"],
      ["cancelled", "batch.cancelled"],
    ] as const) {
      const id = `batch_${status}`;
      fake.set(openaiBatch(id, status));
      const sent = await app.post("openai", fake.webhook(SECRET, type, id));
      expect(sent).toMatchObject({ status: 200, body: { outcome: "applied", state: status } });
      expect(fake.server.requestsTo(`/v1/batches/${id}`)).toHaveLength(1);
      expect(await app.job("openai", id)).toMatchObject({
        state: status,
        result: { output_file_id: "file-out456" },
      });
    }
  });

  it("answers a redelivered thin webhook as a duplicate without asking OpenAI again", async () => {
    fake.set(openaiBatch("batch_again", "completed"));
    const delivery = fake.webhook(SECRET, "batch.completed", "batch_again");
    expect(await app.post("openai", delivery)).toMatchObject({ status: 200, body: { outcome: "applied" } });
    const fetched = fake.server.requestsTo("/v1/batches/batch_again").length;
    // OpenAI now rate-limits us: the redelivery must not depend on it.
    fake.server.failNext = { status: 429, count: 5, retryAfter: "60" };
    expect(await app.post("openai", delivery)).toMatchObject({
      status: 200,
      body: { outcome: "duplicate-delivery", applied: false, state: "succeeded" },
    });
    expect(fake.server.requestsTo("/v1/batches/batch_again")).toHaveLength(fetched);
  });

  it("settles a cancelled response from the type alone, without a fetch", async () => {
    const before = fake.server.seen.length;
    const sent = await app.post("openai", fake.webhook(SECRET, "response.cancelled", "resp_gone"));
    expect(sent).toMatchObject({ status: 200, body: { outcome: "applied", state: "cancelled" } });
    expect(fake.server.seen.length).toBe(before);
  });

  it("records an event type it does not track as an unknown state", async () => {
    const sent = await app.post("openai", fake.webhook(SECRET, "fine_tuning.job.succeeded", "ftjob_1"));
    expect(sent).toMatchObject({ status: 200, body: { outcome: "unknown-state", applied: false } });
  });

  it("answers 5xx when the fetch fails, so that OpenAI retries the webhook", async () => {
    fake.set(openaiResponse("resp_retry", "completed"));
    fake.server.failNext = { status: 503, count: 1, retryAfter: "7" };
    const delivery = fake.webhook(SECRET, "response.completed", "resp_retry");
    const first = await app.post("openai", delivery);
    expect(first.status).toBe(500);
    expect(first.body).toMatchObject({
      retryable: true,
      reason: "provider-fetch-failed",
      retryAfterSeconds: 7,
    });
    const retried = await app.post("openai", delivery);
    expect(retried).toMatchObject({ status: 200, body: { outcome: "applied", state: "succeeded" } });
  });
});
