import {
  checkTimestamp,
  DEFAULT_TOLERANCE_SECONDS,
  isWholeSeconds,
  type ReceivedWebhookHeaders,
  signatureError,
} from "../../signature-common.js";

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

/** A Stripe delivery whose header is present and whose timestamp is fresh. */
interface StripeSignedMessage {
  timestampSeconds: number;
  /** `${t}.` as sent (leading zeros kept): what is signed before the raw body. */
  signedPrefix: string;
  /** Each `v1` digest, lower-cased hex text as sent. */
  signatures: readonly string[];
}

/** Reads the header; throws `signature-invalid` when it is missing, has no `t` or the time is off. */
export function readStripeSignatureHeader(
  headers: ReceivedWebhookHeaders,
  options: Pick<StripeSignatureVerifierOptions, "header" | "toleranceSeconds" | "now">,
): StripeSignedMessage {
  const header = options.header ?? "stripe-signature";
  const value = headers.get?.(header);
  if (!value) throw signatureError("missing-headers", `the ${header} header is required`);
  let timestamp: string | null = null;
  const signatures: string[] = [];
  for (const part of value.split(",")) {
    const [name, ...rest] = part.trim().split("=");
    const text = rest.join("=");
    if (name === "t") timestamp = text;
    else if (name === "v1") signatures.push(text.toLowerCase());
  }
  if (timestamp === null || !isWholeSeconds(timestamp))
    throw signatureError("bad-timestamp", `${header} needs t=<unix seconds>`);
  const timestampSeconds = Number(timestamp);
  checkTimestamp(timestampSeconds, options.now, options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS);
  return { timestampSeconds, signedPrefix: `${timestamp}.`, signatures };
}
