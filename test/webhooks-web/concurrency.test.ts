import { afterEach, describe, expect, it, vi } from "vitest";
import { secretKey } from "../../src/webhooks/schemes/standard-webhooks/node.js";
import type { WebhookSignatureConfig } from "../../src/webhooks/verifier-choice.js";
import { webVerifiers } from "../../src/webhooks/web-verifiers.js";
import { ED25519_PAIRS, ed25519Signature, hmacDigest, standardContent } from "./helpers/keys.js";
import { type Delivery, receivedHeaders } from "./helpers/outcome.js";

// Every (secret × signature) check is handed to crypto.subtle.verify before the first one
// answers: the checks of one delivery run side by side, never one awaited after another.

const NOW_MS = 1_767_225_600_000;
const TIMESTAMP = String(NOW_MS / 1000);
const body = new TextEncoder().encode('{"jobId":"j","state":"succeeded"}');

/** Calls of crypto.subtle.verify, and how many had started when the first one answered. */
function watchVerify() {
  const subtle = crypto.subtle;
  const original = subtle.verify.bind(subtle);
  const watch = { started: 0, startedWhenFirstAnswered: null as number | null };
  vi.spyOn(subtle, "verify").mockImplementation(async (...args: Parameters<typeof subtle.verify>) => {
    watch.started++;
    const verified = await original(...args);
    watch.startedWhenFirstAnswered ??= watch.started;
    return verified;
  });
  return watch;
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** Checks the delivery once to import the keys, then watches a second check. */
async function watchSecondCheck(config: WebhookSignatureConfig, delivery: Delivery) {
  const verify = webVerifiers.webhook("p", config, () => NOW_MS);
  const headers = receivedHeaders(delivery.headers);
  const first = await Promise.resolve(verify(delivery.body, headers)).catch((error: unknown) => error);
  const watch = watchVerify();
  const second = await Promise.resolve(verify(delivery.body, headers)).catch((error: unknown) => error);
  expect(second).toEqual(first);
  return { watch, outcome: second };
}

describe("the WebCrypto verifiers check all candidates concurrently", () => {
  it("Standard Webhooks: 3 secrets × 10 signatures (v1 and v1a), the last one good", async () => {
    const secrets = [
      "whsec_AAAAAAAAAAAAAAAA",
      "whsec_BBBBBBBBBBBBBBBB",
      (ED25519_PAIRS[0] as (typeof ED25519_PAIRS)[number]).secret,
    ];
    const content = standardContent("msg_c", TIMESTAMP, body);
    const wrong = Array.from(
      { length: 7 },
      (_, i) => `v1,${hmacDigest(secretKey(`whsec_${"C".repeat(16 + 4 * i)}`), content, "base64")}`,
    );
    const wrongV1a = Array.from({ length: 2 }, () =>
      ed25519Signature((ED25519_PAIRS[1] as (typeof ED25519_PAIRS)[number]).privateKey, content),
    );
    const good = `v1,${hmacDigest(secretKey("whsec_BBBBBBBBBBBBBBBB"), content, "base64")}`;
    const delivery = {
      body,
      headers: {
        "webhook-id": "msg_c",
        "webhook-timestamp": TIMESTAMP,
        "webhook-signature": [...wrong, ...wrongV1a, good].join(" "),
      },
    };
    const { watch, outcome } = await watchSecondCheck({ secrets }, delivery);
    expect(outcome).toEqual({ id: "msg_c", timestampSeconds: NOW_MS / 1000 });
    // v1: 2 secrets × 8 signatures; v1a: 1 key × 2 signatures.
    expect(watch.started).toBe(18);
    expect(watch.startedWhenFirstAnswered).toBe(18);
  });

  it("HMAC header: 6 secrets, none matching", async () => {
    const secrets = Array.from({ length: 6 }, (_, i) => `secret-${i}`);
    const delivery = { body, headers: { "x-signature": hmacDigest("another", body, "hex") } };
    const { watch, outcome } = await watchSecondCheck({ scheme: "hmac-sha256", secrets }, delivery);
    expect(outcome).toMatchObject({ code: "signature-invalid" });
    expect(watch.started).toBe(6);
    expect(watch.startedWhenFirstAnswered).toBe(6);
  });

  it("Stripe: 3 secrets × 4 signatures", async () => {
    const secrets = ["whsec_one", "whsec_two", "whsec_three"];
    const content = Buffer.concat([Buffer.from(`${TIMESTAMP}.`), body]);
    const v1 = ["a", "b", "c", "whsec_three"].map((key) => `v1=${hmacDigest(key, content, "hex")}`);
    const delivery = { body, headers: { "stripe-signature": [`t=${TIMESTAMP}`, ...v1].join(",") } };
    const { watch, outcome } = await watchSecondCheck({ scheme: "stripe", secrets }, delivery);
    expect(outcome).toMatchObject({ timestampSeconds: NOW_MS / 1000 });
    expect(watch.started).toBe(12);
    expect(watch.startedWhenFirstAnswered).toBe(12);
  });
});
