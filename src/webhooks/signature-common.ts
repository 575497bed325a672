import { FinalityError } from "../core/errors.js";
import { LIMITS } from "../core/validation.js";

/**
 * What every signature scheme shares, whatever does the cryptography (node:crypto on Node,
 * WebCrypto on Workers): the headers as received, the refusals, the timestamp tolerance and the
 * sender's delivery id. Each scheme's own header reading is in schemes/<scheme>/header.ts.
 */

const SIGNATURE_FAILURES = [
  "missing-headers",
  "bad-timestamp",
  "timestamp-too-old",
  "timestamp-too-new",
  "no-matching-signature",
] as const;
type SignatureFailure = (typeof SIGNATURE_FAILURES)[number];

export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The three headers as read from a request; a header that is absent is null or undefined. */
export interface ReceivedWebhookHeaders {
  id: string | null | undefined;
  timestamp: string | null | undefined;
  signature: string | null | undefined;
  /** Any other header by lower-case name, for schemes that sign elsewhere (absent: none can be read). */
  get?: ((name: string) => string | null | undefined) | undefined;
}

export interface VerifiedWebhook {
  id: string;
  timestampSeconds: number;
  /**
   * False when the signature proves who sent the webhook but does not cover the body (a JWT in a
   * header that signs no digest of it): the adapter must then not take the body's word for a state.
   */
  bodySigned?: boolean;
}

/** A WebCrypto scheme's verifier: WebCrypto answers asynchronously, so its result is a promise. */
export type WebWebhookVerifier = (
  body: Uint8Array,
  headers: ReceivedWebhookHeaders,
) => Promise<VerifiedWebhook>;

const MESSAGES: Record<SignatureFailure, string> = {
  "missing-headers": "webhook-id, webhook-timestamp and webhook-signature headers are required",
  "bad-timestamp": "webhook-timestamp must be whole seconds since the epoch",
  "timestamp-too-old": "webhook-timestamp is too old",
  "timestamp-too-new": "webhook-timestamp is too far in the future",
  "no-matching-signature": "no signature matches the body with any configured secret",
};

/** The one refusal every scheme throws; `message` replaces the Standard Webhooks wording. */
export function signatureError(reason: SignatureFailure, message = MESSAGES[reason]): FinalityError {
  return new FinalityError("signature-invalid", message, { details: { reason } });
}

export function nowSeconds(now: () => number): number {
  return Math.floor(now() / 1000);
}

/** Digits only: parseInt would accept "12abc" and let two headers sign as one timestamp. */
export function isWholeSeconds(text: string): boolean {
  return /^[0-9]{1,15}$/.test(text);
}

/** Refuses a signed timestamp further than `toleranceSeconds` from now, either way (replays). */
export function checkTimestamp(timestampSeconds: number, now: () => number, toleranceSeconds: number): void {
  const current = nowSeconds(now);
  if (current - timestampSeconds > toleranceSeconds) throw signatureError("timestamp-too-old");
  if (timestampSeconds - current > toleranceSeconds) {
    // `date +%s%3N` and Date.now() give milliseconds: say so rather than only "in the future".
    const milliseconds = Math.abs(timestampSeconds / 1000 - current) <= Math.max(toleranceSeconds, 86_400);
    throw milliseconds
      ? signatureError(
          "timestamp-too-new",
          `${MESSAGES["timestamp-too-new"]}: ${timestampSeconds} looks like milliseconds; seconds since the epoch are expected`,
        )
      : signatureError("timestamp-too-new");
  }
}

/** The sender's delivery id from `idHeader` when it sends a usable one; null: hash the body. */
export function sentDeliveryId(headers: ReceivedWebhookHeaders, idHeader: string | undefined): string | null {
  const sent = idHeader === undefined ? undefined : headers.get?.(idHeader)?.trim();
  return sent && sent.length <= LIMITS.deliveryIdLength ? sent : null;
}
