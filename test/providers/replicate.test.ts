import Replicate, { validateWebhook } from "replicate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { ReplicateFake } from "../fakes/replicate-fake.js";
import { PREDICTION_STATUSES, prediction } from "../fakes/replicate-fixtures.js";
import { adapterFor, pollOnce } from "./helpers/adapter.js";
import { type ProviderApp, providerApp } from "./helpers/provider-app.js";

const fake = new ReplicateFake();
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

const config = () => ({
  type: "replicate",
  baseUrl: base,
  apiKey: fake.apiKey,
  webhook: { secrets: [fake.secret] },
});

/** From https://replicate.com/docs/topics/predictions/lifecycle, not from the adapter's table. */
const EXPECTED: Record<string, string> = {
  starting: "pending",
  processing: "running",
  succeeded: "succeeded",
  failed: "failed",
  canceled: "cancelled",
  aborted: "expired",
};

describe("the Replicate fake answers what the official client reads", () => {
  const client = () => new Replicate({ auth: fake.apiKey, baseUrl: base });

  it.each(PREDICTION_STATUSES)("predictions.get: %s", async (status) => {
    fake.set(prediction(`p_sdk_${status}`, status));
    expect(await client().predictions.get(`p_sdk_${status}`)).toMatchObject({
      id: `p_sdk_${status}`,
      status,
    });
  });

  it("webhooks.default.secret.get gives the signing secret", async () => {
    expect(await client().webhooks.default.secret.get()).toEqual({ key: fake.secret });
  });
});

describe("Replicate maps every documented status", () => {
  it.each(Object.entries(EXPECTED))("%s → %s", async (status, expected) => {
    fake.set(prediction(`p_map_${status}`, status));
    const result = await pollOnce(adapterFor("replicate", config()), `p_map_${status}`);
    expect(result).toMatchObject({ kind: "observed", observation: { state: expected, rawState: status } });
  });

  it("keeps output and metrics as the result, the error as the error", async () => {
    const adapter = adapterFor("replicate", config());
    expect(await pollOnce(adapter, "p_map_succeeded")).toMatchObject({
      observation: { result: { output: "hello Alice", metrics: { predict_time: 1.9 } } },
    });
    expect(await pollOnce(adapter, "p_map_failed")).toMatchObject({
      observation: { error: { message: "CUDA out of memory" } },
    });
  });

  it("cannot poll without an API key, and still takes webhooks", () => {
    const adapter = adapterFor("replicate", { type: "replicate", webhook: { secrets: [fake.secret] } });
    expect(adapter.poller).toBeNull();
  });
});

describe("signatures: checked where the official validateWebhook does not", () => {
  it("validateWebhook accepts what the fake sends, and so does Finality", async () => {
    const delivery = fake.webhook(prediction("p_sig", "succeeded"));
    const valid = await validateWebhook(
      {
        id: delivery.headers["webhook-id"] as string,
        timestamp: delivery.headers["webhook-timestamp"] as string,
        signature: delivery.headers["webhook-signature"] as string,
        body: delivery.body,
        secret: fake.secret,
      },
      globalThis.crypto,
    );
    expect(valid).toBe(true);
    const app = await providerApp({ replicate: config() });
    expect(await app.post("replicate", delivery)).toMatchObject({ status: 200 });
    await app.close();
  });

  it("an hour-old delivery passes validateWebhook (no timestamp check) but not Finality", async () => {
    const delivery = fake.webhook(prediction("p_old", "succeeded"), {
      timestampSeconds: Math.floor(Date.now() / 1000) - 3600,
    });
    const headers = delivery.headers as Record<string, string>;
    const valid = await validateWebhook(
      {
        id: headers["webhook-id"]!,
        timestamp: headers["webhook-timestamp"]!,
        signature: headers["webhook-signature"]!,
        body: delivery.body,
        secret: fake.secret,
      },
      globalThis.crypto,
    );
    expect(valid).toBe(true);
    const app = await providerApp({ replicate: config() });
    expect(await app.post("replicate", delivery)).toMatchObject({
      status: 401,
      body: { reason: "timestamp-too-old" },
    });
    await app.close();
  });
});

describe("Replicate end to end", () => {
  let app: ProviderApp;
  beforeAll(async () => {
    app = await providerApp({ replicate: config() });
  });
  afterAll(() => app.close());

  it("settles a prediction whose webhook was lost, on reconcile", async () => {
    await app.register("replicate", "p_lost");
    fake.set(prediction("p_lost", "succeeded"));
    await app.reconciler.runOnce();
    expect(await app.job("replicate", "p_lost")).toMatchObject({
      state: "succeeded",
      settledBy: "reconcile",
      result: { output: "hello Alice" },
    });
  });

  it("takes the whole prediction from the webhook without a fetch; a re-send is a duplicate", async () => {
    const polls = fake.server.seen.length;
    expect(await app.post("replicate", fake.webhook(prediction("p_hook", "processing")))).toMatchObject({
      body: { state: "running" },
    });
    const completed = fake.webhook(prediction("p_hook", "succeeded"), { id: "msg_completed_p_hook" });
    expect(await app.post("replicate", completed)).toMatchObject({
      status: 200,
      body: { outcome: "applied", state: "succeeded" },
    });
    const resent = fake.webhook(prediction("p_hook", "succeeded"), { id: "msg_completed_p_hook" });
    expect(await app.post("replicate", resent)).toMatchObject({
      status: 200,
      body: { outcome: "duplicate-delivery" },
    });
    expect(fake.server.seen.length).toBe(polls);
  });

  it("an aborted prediction (deadline passed before it started) is expired", async () => {
    expect(await app.post("replicate", fake.webhook(prediction("p_abort", "aborted")))).toMatchObject({
      body: { state: "expired" },
    });
  });
});
