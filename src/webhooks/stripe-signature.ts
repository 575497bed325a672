import { createHmac, timingSafeEqual } from "node:crypto";
import { deliveryIdOf, nowSeconds } from "./hmac-signature.js";
import {
  DEFAULT_TOLERANCE_SECONDS,
  type ReceivedWebhookHeaders,
  signatureError,
  type VerifiedWebhook,
} from "./standard-webhooks.js";

/**
 * Stripe's scheme (https://docs.stripe.com/webhooks#verify-manually): header
 * `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...]`, where each v1 is
 * HMAC-SHA256(secret as UTF-8 bytes, `${t}.${raw body}`). The whole secret, `whsec_` included, is
 * the key: Stripe's secrets are not base64 like Standard Webhooks ones. Other schemes (v0) are ignored.
 */
export interface StripeSignatureVerifierOptions {
  secrets: readonly string[];
  /** Lower-case header name; `stripe-signature` by default. */
  header?: string | undefined;
  toleranceSeconds?: number | undefined;
  idHeader?: string | undefined;
  now: () => number;
}

export function createStripeSignatureVerifier(options: StripeSignatureVerifierOptions) {
  const header = options.header ?? "stripe-signature";
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const keys = options.secrets.map((secret) => Buffer.from(secret, "utf8"));
  return (body: Uint8Array, headers: ReceivedWebhookHeaders): VerifiedWebhook => {
    const value = headers.get?.(header);
    if (!value) throw signatureError("missing-headers", `the ${header} header is required`);
    let timestamp: string | null = null;
    const signatures: Buffer[] = [];
    for (const part of value.split(",")) {
      const [name, ...rest] = part.trim().split("=");
      const text = rest.join("=");
      if (name === "t") timestamp = text;
      else if (name === "v1") signatures.push(Buffer.from(text.toLowerCase()));
    }
    if (timestamp === null || !/^[0-9]{1,15}$/.test(timestamp))
      throw signatureError("bad-timestamp", `${header} needs t=<unix seconds>`);
    const timestampSeconds = Number(timestamp);
    const now = nowSeconds(options.now);
    if (now - timestampSeconds > toleranceSeconds) throw signatureError("timestamp-too-old");
    if (timestampSeconds - now > toleranceSeconds) throw signatureError("timestamp-too-new");
    for (const key of keys) {
      const expected = Buffer.from(
        createHmac("sha256", key).update(`${timestamp}.`).update(body).digest("hex"),
      );
      for (const candidate of signatures) {
        if (candidate.length === expected.length && timingSafeEqual(candidate, expected))
          return { id: deliveryIdOf(body, headers, options.idHeader), timestampSeconds };
      }
    }
    throw signatureError("no-matching-signature");
  };
}
