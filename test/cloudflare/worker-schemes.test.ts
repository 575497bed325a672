import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { ED25519_PAIRS, ed25519Signature, standardContent } from "../webhooks-web/helpers/keys.js";
import { startWorkerLedger, type WorkerLedger } from "./helpers/worker-ledger.js";

const [PAIR, OTHER_PAIR] = ED25519_PAIRS as [(typeof ED25519_PAIRS)[0], (typeof ED25519_PAIRS)[0]];
const HMAC_SECRET = "a-shared-hmac-secret";
const STRIPE_SECRET = "whsec_stripe_like_secret";

/**
 * Every signature scheme checked by WebCrypto inside workerd: Standard Webhooks with an Ed25519
 * public key (v1a) and with rotated HMAC secrets, the plain HMAC header scheme, and Stripe's.
 */
describe("signature schemes on Workers", () => {
  let worker: WorkerLedger;
  beforeAll(async () => {
    worker = await startWorkerLedger({
      providers: {
        signed: { type: "generic", webhook: { secrets: [PAIR.secret] } },
        rotated: {
          type: "generic",
          webhook: { secrets: ["whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD", SECRET] },
        },
        plain: {
          type: "generic",
          webhook: {
            secrets: [HMAC_SECRET],
            scheme: "hmac-sha256",
            header: "x-hub-signature-256",
            prefix: "sha256=",
          },
        },
        stripe: { type: "generic", webhook: { secrets: [STRIPE_SECRET], scheme: "stripe" } },
      },
      log: { level: "error" },
    });
  });
  afterAll(() => worker?.dispose());

  const post = (provider: string, body: string, headers: Record<string, string>) =>
    worker.fetch(`/webhooks/${provider}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });

  it("Standard Webhooks v1a: accepts the configured Ed25519 key's signature, refuses another key's", async () => {
    const body = JSON.stringify({ jobId: "ed-1", state: "succeeded" });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const content = standardContent("msg-ed-1", timestamp, new TextEncoder().encode(body));
    const headers = (privateKey: typeof PAIR.privateKey) => ({
      "webhook-id": "msg-ed-1",
      "webhook-timestamp": timestamp,
      "webhook-signature": ed25519Signature(privateKey, content),
    });
    const refused = await post("signed", body, headers(OTHER_PAIR.privateKey));
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({
      code: "signature-invalid",
      reason: "no-matching-signature",
    });
    const accepted = await post("signed", body, headers(PAIR.privateKey));
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ outcome: "applied", state: "succeeded" });
  });

  it("Standard Webhooks v1: any of several secrets, among several signatures", async () => {
    const body = JSON.stringify({ jobId: "rot-1", state: "running" });
    const headers = signWith(SECRET, body);
    headers["webhook-signature"] = `v1,bm90IGEgc2lnbmF0dXJl ${headers["webhook-signature"]}`;
    expect((await post("rotated", body, headers)).status).toBe(200);
  });

  it("HMAC header scheme: a good digest is applied, a wrong one refused", async () => {
    const body = JSON.stringify({ jobId: "hmac-1", state: "running" });
    const digest = createHmac("sha256", HMAC_SECRET).update(body).digest("hex");
    expect(
      (await post("plain", body, { "x-hub-signature-256": `sha256=${digest.replace(/^./, "0")}0` })).status,
    ).toBe(401);
    expect((await post("plain", body, { "x-hub-signature-256": `sha256=${digest}` })).status).toBe(200);
  });

  it("Stripe scheme: a fresh signature is applied, a stale one refused", async () => {
    const body = JSON.stringify({ jobId: "stripe-1", state: "running" });
    const header = (t: number) =>
      `t=${t},v1=${createHmac("sha256", STRIPE_SECRET).update(`${t}.${body}`).digest("hex")}`;
    const now = Math.floor(Date.now() / 1000);
    expect((await post("stripe", body, { "stripe-signature": header(now - 3600) })).status).toBe(401);
    expect((await post("stripe", body, { "stripe-signature": header(now) })).status).toBe(200);
  });

  it("serves the dashboard from the same app", async () => {
    const page = await worker.fetch("/");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Overview");
  });
});
