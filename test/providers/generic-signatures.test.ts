import { createHmac, sign as ed25519Sign, generateKeyPairSync } from "node:crypto";
import { sign as githubSign } from "@octokit/webhooks-methods";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { standardWebhook } from "../fakes/webhook-delivery.js";
import { type ProviderApp, providerApp } from "./helpers/provider-app.js";

const GITHUB_SECRET = "It's a Secret to Everybody";
const ROTATED = "the-next-secret";
const STRIPE_SECRET = "whsec_test_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH";
const SW_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

const keys = generateKeyPairSync("ed25519");
const rawPublicKey = Buffer.from(keys.publicKey.export({ format: "jwk" }).x as string, "base64url");
const PUBLIC_KEY = `whpk_${rawPublicKey.toString("base64")}`;

let app: ProviderApp;
beforeAll(async () => {
  app = await providerApp({
    github: {
      type: "generic",
      webhook: {
        scheme: "hmac-sha256",
        secrets: [GITHUB_SECRET, ROTATED],
        header: "X-Hub-Signature-256",
        prefix: "sha256=",
        idHeader: "X-GitHub-Delivery",
      },
    },
    shopify: {
      type: "generic",
      webhook: {
        scheme: "hmac-sha256",
        secrets: [GITHUB_SECRET],
        header: "X-Shopify-Hmac-Sha256",
        encoding: "base64",
      },
    },
    stripe: {
      type: "generic",
      webhook: { scheme: "stripe", secrets: [STRIPE_SECRET], toleranceSeconds: 300 },
    },
    asym: {
      type: "generic",
      webhook: { secrets: [SW_SECRET, PUBLIC_KEY] },
      states: { DONE: "succeeded", BUSY: "running" },
    },
  });
});
afterAll(() => app.close());

let counter = 0;
const body = (state = "succeeded") => JSON.stringify({ jobId: `job-${++counter}`, state });
const post = async (provider: string, text: string, headers: Record<string, string>) =>
  app.post(provider, { body: text, headers: { "content-type": "application/json", ...headers } });

describe("hmac-sha256 in a named header (GitHub, Shopify)", () => {
  it("accepts a signature made by @octokit/webhooks-methods, with any active secret", async () => {
    for (const secret of [GITHUB_SECRET, ROTATED]) {
      const text = body();
      const sent = await post("github", text, {
        "x-hub-signature-256": await githubSign(secret, text),
        "x-github-delivery": `d-${counter}`,
      });
      expect(sent).toMatchObject({ status: 200, body: { outcome: "applied" } });
    }
  });

  it("uses the delivery header to dedupe, and the body's hash without one", async () => {
    const text = body();
    const headers = {
      "x-hub-signature-256": await githubSign(GITHUB_SECRET, text),
      "x-github-delivery": "d-repeat",
    };
    expect(await post("github", text, headers)).toMatchObject({ status: 200, body: { outcome: "applied" } });
    expect(await post("github", text, headers)).toMatchObject({ body: { outcome: "duplicate-delivery" } });
    const signature = createHmac("sha256", GITHUB_SECRET).update(text).digest("base64");
    expect(await post("shopify", text, { "x-shopify-hmac-sha256": signature })).toMatchObject({
      body: { outcome: "applied" },
    });
    expect(await post("shopify", text, { "x-shopify-hmac-sha256": signature })).toMatchObject({
      body: { outcome: "duplicate-delivery" },
    });
  });

  it.each([
    ["no header", {}],
    ["the wrong secret", { "x-hub-signature-256": "sha256=0000" }],
    ["no prefix", { "x-hub-signature-256": createHmac("sha256", GITHUB_SECRET).update("x").digest("hex") }],
  ])("refuses %s", async (_name, headers) => {
    expect(await post("github", body(), headers)).toMatchObject({
      status: 401,
      body: { code: "signature-invalid" },
    });
  });

  it("refuses a signature over other bytes", async () => {
    const text = body();
    const headers = { "x-hub-signature-256": await githubSign(GITHUB_SECRET, text) };
    expect(await post("github", text.replace("succeeded", "failed"), headers)).toMatchObject({ status: 401 });
  });
});

describe("Stripe-style t=...,v1=...", () => {
  const now = Math.floor(Date.now() / 1000);
  const header = (text: string, timestamp = now, secret = STRIPE_SECRET) =>
    Stripe.webhooks.generateTestHeaderString({ payload: text, secret, timestamp });

  it("accepts a header made by the stripe package", async () => {
    const text = body();
    expect(await post("stripe", text, { "stripe-signature": header(text) })).toMatchObject({ status: 200 });
  });

  it.each([
    ["outside the tolerance", (t: string) => header(t, now - 301), "timestamp-too-old"],
    ["signed with another secret", (t: string) => header(t, now, "whsec_other"), "no-matching-signature"],
    ["without a timestamp", (t: string) => header(t).replace(/t=\d+,/, ""), "bad-timestamp"],
  ])("refuses one %s", async (_name, make, reason) => {
    const text = body();
    expect(await post("stripe", text, { "stripe-signature": make(text) })).toMatchObject({
      status: 401,
      body: { reason },
    });
  });
});

describe("Standard Webhooks v1a (ed25519) beside v1, and a state table", () => {
  const v1a = (id: string, timestamp: number, text: string) =>
    `v1a,${ed25519Sign(null, Buffer.from(`${id}.${timestamp}.${text}`), keys.privateKey).toString("base64")}`;
  const now = Math.floor(Date.now() / 1000);

  it("accepts a v1a signature checked against a whpk_ public key", async () => {
    const text = body("DONE");
    const headers = {
      "webhook-id": "msg_v1a_1",
      "webhook-timestamp": String(now),
      "webhook-signature": v1a("msg_v1a_1", now, text),
    };
    expect(await post("asym", text, headers)).toMatchObject({ status: 200, body: { state: "succeeded" } });
  });

  it("still accepts v1 from the same instance (rotation from HMAC to ed25519)", async () => {
    const delivery = standardWebhook(SW_SECRET, body("BUSY"));
    expect(await app.post("asym", delivery)).toMatchObject({ status: 200, body: { state: "running" } });
  });

  it("refuses a v1a signature over other content, and records a state the table does not know", async () => {
    const text = body("DONE");
    const headers = {
      "webhook-id": "msg_v1a_2",
      "webhook-timestamp": String(now),
      "webhook-signature": v1a("msg_v1a_x", now, text),
    };
    expect(await post("asym", text, headers)).toMatchObject({ status: 401 });
    const odd = standardWebhook(SW_SECRET, body("PAUSED"));
    expect(await app.post("asym", odd)).toMatchObject({ status: 200, body: { outcome: "unknown-state" } });
  });
});
