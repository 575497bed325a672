import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { LIMITS } from "../core/validation.js";
import { type ReceivedWebhookHeaders, signatureError, type VerifiedWebhook } from "./standard-webhooks.js";

/**
 * Plain HMAC-SHA256 of the raw body in one named header, hex or base64, with an optional prefix:
 * GitHub's `X-Hub-Signature-256: sha256=<hex>` (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries),
 * Shopify's `X-Shopify-Hmac-Sha256: <base64>`, and most home-grown senders.
 *
 * The scheme signs no timestamp, so a captured delivery can be replayed: it is only ever the same
 * observation again, and the delivery id (a header such as `X-GitHub-Delivery`, else the body's
 * hash) makes the ledger record a replay as a duplicate.
 */
export interface HmacHeaderVerifierOptions {
  /** Secrets used as their UTF-8 bytes, as GitHub and Shopify do (several during a rotation). */
  secrets: readonly string[];
  /** Lower-case header name, e.g. `x-hub-signature-256`. */
  header: string;
  encoding: "hex" | "base64";
  /** Text before the digest, e.g. `sha256=`; empty for none. */
  prefix: string;
  /** Header carrying the sender's delivery id; absent: `sha256:<hex of the body>`. */
  idHeader?: string | undefined;
  now: () => number;
}

export function createHmacHeaderVerifier(options: HmacHeaderVerifierOptions) {
  const keys = options.secrets.map((secret) => Buffer.from(secret, "utf8"));
  return (body: Uint8Array, headers: ReceivedWebhookHeaders): VerifiedWebhook => {
    const value = headers.get?.(options.header)?.trim();
    if (!value) throw signatureError("missing-headers", `the ${options.header} header is required`);
    if (!value.startsWith(options.prefix))
      throw signatureError("no-matching-signature", `${options.header} must start with "${options.prefix}"`);
    const digest = value.slice(options.prefix.length);
    const candidate = Buffer.from(options.encoding === "hex" ? digest.toLowerCase() : digest);
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
  const sent = idHeader === undefined ? undefined : headers.get?.(idHeader)?.trim();
  if (sent && sent.length <= LIMITS.deliveryIdLength) return sent;
  return `sha256:${createHash("sha256").update(body).digest("hex")}`;
}

export function nowSeconds(now: () => number): number {
  return Math.floor(now() / 1000);
}
