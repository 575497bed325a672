import { createHmac, timingSafeEqual } from "node:crypto";
import { type ReceivedWebhookHeaders, signatureError, type VerifiedWebhook } from "../../signature-common.js";
import { deliveryIdOf } from "../hmac/node.js";
import { readStripeSignatureHeader, type StripeSignatureVerifierOptions } from "./header.js";

/** Stripe's scheme on Node (the header: header.ts; WebCrypto: web.ts). */

export type { StripeSignatureVerifierOptions } from "./header.js";

export function createStripeSignatureVerifier(options: StripeSignatureVerifierOptions) {
  const keys = options.secrets.map((secret) => Buffer.from(secret, "utf8"));
  return (body: Uint8Array, headers: ReceivedWebhookHeaders): VerifiedWebhook => {
    const message = readStripeSignatureHeader(headers, options);
    const candidates = message.signatures.map((text) => Buffer.from(text));
    for (const key of keys) {
      const expected = Buffer.from(
        createHmac("sha256", key).update(message.signedPrefix).update(body).digest("hex"),
      );
      for (const candidate of candidates) {
        if (candidate.length === expected.length && timingSafeEqual(candidate, expected))
          return {
            id: deliveryIdOf(body, headers, options.idHeader),
            timestampSeconds: message.timestampSeconds,
          };
      }
    }
    throw signatureError("no-matching-signature");
  };
}
