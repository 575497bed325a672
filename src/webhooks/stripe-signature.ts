import { createHmac, timingSafeEqual } from "node:crypto";
import { deliveryIdOf } from "./hmac-signature.js";
import { type ReceivedWebhookHeaders, signatureError, type VerifiedWebhook } from "./signature-common.js";
import { readStripeSignatureHeader, type StripeSignatureVerifierOptions } from "./stripe-signature-header.js";

/** Stripe's scheme on Node (the header: stripe-signature-header.ts; WebCrypto: web-stripe-signature.ts). */

export type { StripeSignatureVerifierOptions } from "./stripe-signature-header.js";

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
