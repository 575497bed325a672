import { GenerateVideosOperation, GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GeminiFake } from "../fakes/gemini-fake.js";
import {
  BATCH_STATES,
  geminiBatch,
  geminiInteraction,
  geminiOperation,
  INTERACTION_STATUSES,
  VERTEX_ONLY_STATES,
  VIDEO_OPERATION,
  vertexJob,
} from "../fakes/gemini-fixtures.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { adapterFor, pollOnce } from "./helpers/adapter.js";
import { type ProviderApp, providerApp } from "./helpers/provider-app.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const fake = new GeminiFake();
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

const config = (jwt: Record<string, unknown> = {}) => ({
  type: "gemini",
  baseUrl: base,
  apiKey: fake.apiKey,
  webhook: {
    secrets: [SECRET],
    jwt: { jwksUrl: `${base}/.well-known/jwks.json`, audience: fake.audience, ...jwt },
  },
});
const poll = (id: string, kind: string | null = null) =>
  pollOnce(adapterFor("gemini", config()), id, { kind });

/** From Google's documentation (batch API, JobState), not from the adapter's table. */
const STATE_EXPECTED: Record<string, string> = {
  PENDING: "pending",
  QUEUED: "pending",
  RUNNING: "running",
  UPDATING: "running",
  CANCELLING: "running",
  PAUSED: "running",
  SUCCEEDED: "succeeded",
  PARTIALLY_SUCCEEDED: "succeeded",
  FAILED: "failed",
  CANCELLED: "cancelled",
  EXPIRED: "expired",
};
const INTERACTION_EXPECTED: Record<string, string> = {
  queued: "pending",
  in_progress: "running",
  requires_continuation: "running",
  requires_action: "running",
  completed: "succeeded",
  failed: "failed",
  budget_exceeded: "failed",
  cancelled: "cancelled",
  incomplete: "failed",
};

describe("the Gemini fake answers what @google/genai reads", () => {
  const client = () =>
    new GoogleGenAI({ apiKey: fake.apiKey, apiVersion: "v1beta", httpOptions: { baseUrl: base } });

  it.each(BATCH_STATES)("batches.get: BATCH_STATE_%s comes back as JOB_STATE_%s", async (state) => {
    fake.set(`batches/sdk-${state}`, geminiBatch(`batches/sdk-${state}`, `BATCH_STATE_${state}`));
    const job = await client().batches.get({ name: `batches/sdk-${state}` });
    expect(job).toMatchObject({ name: `batches/sdk-${state}`, state: `JOB_STATE_${state}` });
    if (state === "SUCCEEDED") expect(job.dest).toMatchObject({ fileName: "files/batch-abc" });
  });

  it.each(["running", "response", "error"] as const)("operations.get: %s", async (outcome) => {
    const name = `${VIDEO_OPERATION}-${outcome}`;
    fake.set(name, geminiOperation(name, outcome));
    const operation = new GenerateVideosOperation();
    operation.name = name;
    const read: GenerateVideosOperation = await client().operations.get({ operation });
    expect(read.done ?? false).toBe(outcome !== "running");
    if (outcome === "error") expect(read.error).toMatchObject({ code: 3 });
    if (outcome === "response") expect(read.response?.generatedVideos?.[0]?.video?.uri).toContain("files/x");
  });

  it.each(["in_progress", "completed"])("interactions.get: %s", async (status) => {
    fake.set(`interactions/int_sdk_${status}`, geminiInteraction(`int_sdk_${status}`, status));
    const interaction = await client().interactions.get(`int_sdk_${status}`);
    expect(interaction).toMatchObject({ id: `int_sdk_${status}`, status });
  });
});

describe("Gemini polling maps every documented state", () => {
  it.each(Object.entries(STATE_EXPECTED))("BATCH_STATE_ and JOB_STATE_%s → %s", async (state, expected) => {
    fake.set(`batches/map-${state}`, geminiBatch(`batches/map-${state}`, `BATCH_STATE_${state}`));
    fake.set(`batches/vx-${state}`, vertexJob(`batches/vx-${state}`, `JOB_STATE_${state}`));
    for (const id of [`batches/map-${state}`, `batches/vx-${state}`])
      expect(await poll(id)).toMatchObject({
        kind: "observed",
        observation: { state: expected, kind: "batch" },
      });
  });

  it("marks a partially succeeded batch, keeps the output file, and leaves UNSPECIFIED unknown", async () => {
    expect(VERTEX_ONLY_STATES).toContain("PARTIALLY_SUCCEEDED");
    expect(await poll("batches/map-PARTIALLY_SUCCEEDED")).toMatchObject({
      observation: { result: { partial: true } },
    });
    expect(await poll("batches/map-SUCCEEDED")).toMatchObject({
      observation: {
        result: { output: { responsesFile: "files/batch-abc" }, batchStats: { requestCount: "3" } },
      },
    });
    fake.set("batches/map-x", geminiBatch("batches/map-x", "BATCH_STATE_UNSPECIFIED"));
    expect(await poll("batches/map-x")).toMatchObject({ observation: { state: "BATCH_STATE_UNSPECIFIED" } });
  });

  it.each([
    ["running", "running"],
    ["response", "succeeded"],
    ["error", "failed"],
    ["cancelled", "cancelled"],
  ] as const)("a long-running operation, %s → %s", async (outcome, expected) => {
    const name = `${VIDEO_OPERATION}-map-${outcome}`;
    fake.set(name, geminiOperation(name, outcome));
    expect(await poll(name)).toMatchObject({
      kind: "observed",
      observation: { state: expected, kind: "operation" },
    });
  });

  it("a done operation with neither error nor response succeeded with no result (AIP-151: Empty)", async () => {
    const name = `${VIDEO_OPERATION}-map-empty`;
    fake.set(name, { name, done: true, metadata: {} });
    expect(await poll(name)).toMatchObject({
      kind: "observed",
      observation: { state: "succeeded", rawState: "done:empty", result: null },
    });
  });

  it.each(INTERACTION_STATUSES)("interaction %s", async (status) => {
    fake.set(`interactions/int_${status}`, geminiInteraction(`int_${status}`, status));
    const result = await poll(`int_${status}`, "interaction");
    expect(result).toMatchObject({ kind: "observed", observation: { state: INTERACTION_EXPECTED[status] } });
    if (status === "requires_action")
      expect(result).toMatchObject({ observation: { result: { waitingForInput: true } } });
  });

  it("asks for a name with slashes as the SDK does (segments encoded, slashes kept)", async () => {
    await poll(`${VIDEO_OPERATION}-map-running`);
    expect(fake.server.seen.at(-1)?.path).toBe(`/v1beta/${VIDEO_OPERATION}-map-running`);
  });
});

describe("Gemini webhooks", () => {
  let app: ProviderApp;
  beforeAll(async () => {
    app = await providerApp({
      gemini: config(),
      inline: { ...config(), webhook: { jwt: { jwks: fake.jwks, audience: fake.audience } } },
    });
  });
  afterAll(() => app.close());

  it("settles a batch whose webhook was lost, on reconcile; the id travels URL-encoded", async () => {
    await app.register("gemini", "batches/e2e-lost");
    fake.set("batches/e2e-lost", geminiBatch("batches/e2e-lost", "BATCH_STATE_SUCCEEDED"));
    await app.reconciler.runOnce();
    expect(await app.job("gemini", "batches/e2e-lost")).toMatchObject({
      state: "succeeded",
      settledBy: "reconcile",
    });
  });

  it("fetches the batch on a thin project webhook (bare id → batches/...), and ignores its duplicate", async () => {
    fake.set("batches/thin1", geminiBatch("batches/thin1", "BATCH_STATE_SUCCEEDED"));
    const before = fake.server.requestsTo("/v1beta/batches/thin1").length;
    const delivery = fake.webhook(SECRET, "batch.succeeded", {
      id: "thin1",
      output_file_uri: "gs://b/results.jsonl",
    });
    expect(await app.post("gemini", delivery)).toMatchObject({
      status: 200,
      body: { jobId: "batches/thin1", state: "succeeded" },
    });
    expect(fake.server.requestsTo("/v1beta/batches/thin1").length).toBe(before + 1);
    expect(await app.post("gemini", delivery)).toMatchObject({
      status: 200,
      body: { outcome: "duplicate-delivery" },
    });
  });

  it("takes a failed batch's error from the event without a fetch", async () => {
    const delivery = fake.webhook(SECRET, "batch.failed", {
      id: "batches/f1",
      error_code: 13,
      error_message: "boom",
    });
    expect(await app.post("gemini", delivery)).toMatchObject({ status: 200, body: { state: "failed" } });
    expect(await app.job("gemini", "batches/f1")).toMatchObject({ error: { code: 13, message: "boom" } });
  });

  it("accepts a per-request webhook's RS256 JWT against the JWKS URL, and fetches whatever the body says", async () => {
    fake.set("batches/jwt1", geminiBatch("batches/jwt1", "BATCH_STATE_FAILED"));
    // The body claims success; the JWT does not cover the body, so the fetched state wins.
    const delivery = await fake.jwtWebhook("batch.succeeded", { id: "batches/jwt1" }, { id: "wh_jwt_1" });
    expect(await app.post("gemini", delivery)).toMatchObject({ status: 200, body: { state: "failed" } });
  });

  it("two events signed with one reused token and no webhook-id are two deliveries: the completion is not a duplicate", async () => {
    fake.set("interactions/int_jwt", geminiInteraction("int_jwt", "requires_action"));
    const first = await fake.jwtWebhook("interaction.requires_action", { id: "int_jwt" });
    expect(await app.post("gemini", first)).toMatchObject({ status: 200, body: { state: "running" } });
    fake.set("interactions/int_jwt", geminiInteraction("int_jwt", "completed"));
    // The sender cached its token: the next event carries the same one.
    const completed = await fake.jwtWebhook("interaction.completed", { id: "int_jwt" });
    const reused = {
      body: completed.body,
      headers: { ...completed.headers, "webhook-signature": first.headers["webhook-signature"] as string },
    };
    expect(await app.post("gemini", reused)).toMatchObject({
      status: 200,
      body: { outcome: "applied", state: "succeeded" },
    });
  });

  it("a JWT webhook whose fetch still sees the batch running is retried (5xx), not recorded as running", async () => {
    fake.set("batches/jwt3", geminiBatch("batches/jwt3", "BATCH_STATE_RUNNING"));
    const delivery = await fake.jwtWebhook("batch.succeeded", { id: "batches/jwt3" }, { id: "wh_jwt_3" });
    expect(await app.post("gemini", delivery)).toMatchObject({
      status: 500,
      body: { retryable: true, reason: "provider-lag" },
    });
    fake.set("batches/jwt3", geminiBatch("batches/jwt3", "BATCH_STATE_SUCCEEDED"));
    expect(await app.post("gemini", delivery)).toMatchObject({ status: 200, body: { state: "succeeded" } });
  });

  it("answers 5xx, retryable, when the JWKS cannot be fetched, and accepts the same delivery once it can", async () => {
    // A fresh instance: nothing cached yet, so its first delivery must fetch the key set.
    const fresh = await providerApp({ g: config() });
    try {
      fake.set("batches/jwks1", geminiBatch("batches/jwks1", "BATCH_STATE_SUCCEEDED"));
      const delivery = await fake.jwtWebhook("batch.succeeded", { id: "batches/jwks1" }, { id: "wh_jwks_1" });
      fake.server.failNext = { status: 503, count: 1 };
      const refused = await fresh.post("g", delivery);
      expect(refused).toMatchObject({ status: 500, body: { retryable: true, reason: "jwks-unavailable" } });
      expect(await fresh.post("g", delivery)).toMatchObject({ status: 200, body: { state: "succeeded" } });
    } finally {
      fake.server.failNext = null;
      await fresh.close();
    }
  });

  it("accepts a JWT against an inline JWKS too", async () => {
    fake.set("batches/jwt2", geminiBatch("batches/jwt2", "BATCH_STATE_CANCELLED"));
    const delivery = await fake.jwtWebhook("batch.cancelled", { id: "batches/jwt2" });
    expect(await app.post("inline", delivery)).toMatchObject({ status: 200, body: { state: "cancelled" } });
  });

  it.each([
    ["another audience", { audience: "someone-else" }],
    ["an expired token", { expiresIn: "-10m" }],
  ])("refuses a JWT with %s", async (_name, options) => {
    const delivery = await fake.jwtWebhook("batch.succeeded", { id: "batches/jwt1" }, options);
    expect(await app.post("gemini", delivery)).toMatchObject({
      status: 401,
      body: { code: "signature-invalid" },
    });
  });

  it("refuses a JWT when only static secrets are configured", async () => {
    const only = await providerApp({
      g: { type: "gemini", baseUrl: base, apiKey: fake.apiKey, webhook: { secrets: [SECRET] } },
    });
    const delivery = await fake.jwtWebhook("batch.succeeded", { id: "batches/jwt1" });
    expect(await only.post("g", delivery)).toMatchObject({ status: 401 });
    await only.close();
  });
});
