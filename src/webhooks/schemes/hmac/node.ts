import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import {
  nowSeconds,
  type ReceivedWebhookHeaders,
  sentDeliveryId,
  signatureError,
  type VerifiedWebhook,
} from "../../signature-common.js";
import { type HmacHeaderVerifierOptions, readHmacSignatureHeader } from "./header.js";

/** The HMAC header scheme on Node (the header: header.ts; WebCrypto: web.ts). */

export { nowSeconds } from "../../signature-common.js";
export type { HmacHeaderVerifierOptions } from "./header.js";

export function createHmacHeaderVerifier(options: HmacHeaderVerifierOptions) {
  const keys = options.secrets.map((secret) => Buffer.from(secret, "utf8"));
  return (body: Uint8Array, headers: ReceivedWebhookHeaders): VerifiedWebhook => {
    const candidate = Buffer.from(readHmacSignatureHeader(headers, options));
    for (const key of keys) {
      const expected = Buffer.from(createHmac("sha256", key).update(body).digest(options.encoding));
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) {
        return {
          id: deliveryIdOf(body, headers, options.idHeader),
          timestampSeconds: nowSeconds(options.now),
        };
      }
    }
    throw signatureError("no-matching-signature");
  };
}

/** The sender's delivery id when it sends one, else the body's hash (a replay is then a duplicate). */
export function deliveryIdOf(
  body: Uint8Array,
  headers: ReceivedWebhookHeaders,
  idHeader: string | undefined,
): string {
  return sentDeliveryId(headers, idHeader) ?? `sha256:${createHash("sha256").update(body).digest("hex")}`;
}
