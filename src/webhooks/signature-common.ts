import { FinalityError } from "../core/errors.js";
import { LIMITS } from "../core/validation.js";
import { decodeBase64 } from "./byte-encoding.js";

/**
 * What every signature check shares, whatever does the cryptography (node:crypto on Node,
 * WebCrypto on Workers): the headers, the refusals, the timestamp tolerance and the reading of
 * Standard Webhooks headers and secrets. One implementation, so the two paths cannot drift apart.
 *
 * Standard Webhooks (https://www.standardwebhooks.com/): the sender signs
 * `${webhook-id}.${webhook-timestamp}.${raw body}` with HMAC-SHA256 and sends
 * `webhook-signature: v1,<base64>` (several space-separated signatures during a key rotation), or
 * `v1a,<base64>` (ed25519) for secrets given as public keys, `whpk_<base64 of the 32 raw bytes>`.
 */

export const SIGNATURE_FAILURES = [
  "missing-headers",
  "bad-timestamp",
  "timestamp-too-old",
  "timestamp-too-new",
  "no-matching-signature",
] as const;
export type SignatureFailure = (typeof SIGNATURE_FAILURES)[number];

export const DEFAULT_TOLERANCE_SECONDS = 300;
const SECRET_PREFIX = "whsec_";
const PUBLIC_KEY_PREFIX = "whpk_";

export interface StandardWebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

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

export interface SignInput {
  id: string;
  timestampSeconds: number;
  body: string | Uint8Array;
  secret: string;
}

export interface StandardWebhookVerifierOptions {
  /**
   * Every secret currently accepted (several during a rotation): `whsec_<base64>` or raw text for
   * `v1`, `whpk_<base64>` (an ed25519 public key) for `v1a`.
   */
  secrets: readonly string[];
  toleranceSeconds?: number | undefined;
  /** Epoch milliseconds; injected so that tests control time. */
  now: () => number;
}

/** True when a thrown value is a signature refusal; its reason is in `details.reason`. */
export function signatureFailureOf(error: unknown): SignatureFailure | null {
  if (!(error instanceof FinalityError) || error.code !== "signature-invalid") return null;
  const reason = error.details.reason;
  return SIGNATURE_FAILURES.includes(reason as SignatureFailure) ? (reason as SignatureFailure) : null;
}

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

/** A Standard Webhooks delivery whose headers are present and whose timestamp is fresh. */
export interface StandardWebhookMessage {
  id: string;
  timestampSeconds: number;
  /** `${id}.${timestampSeconds}.`: what is signed before the raw body. */
  signedPrefix: string;
  /** Each space-separated `version,signature` as sent. */
  signatures: readonly string[];
}

/** Reads the three headers; throws `signature-invalid` when one is missing or the time is off. */
export function readStandardWebhook(
  headers: ReceivedWebhookHeaders,
  toleranceSeconds: number,
  now: () => number,
): StandardWebhookMessage {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) throw signatureError("missing-headers");
  if (!isWholeSeconds(timestamp)) throw signatureError("bad-timestamp");
  const timestampSeconds = Number(timestamp);
  checkTimestamp(timestampSeconds, now, toleranceSeconds);
  return {
    id,
    timestampSeconds,
    signedPrefix: `${id}.${timestampSeconds}.`,
    signatures: signature.split(" "),
  };
}

/** The base64 text of each `v1,` (HMAC-SHA256) signature. */
export function hmacSignaturesOf(signatures: readonly string[]): string[] {
  return signatures.filter((versioned) => versioned.startsWith("v1,")).map((versioned) => versioned.slice(3));
}

/** The bytes of each `v1a,` (ed25519) signature; one that is not 64 bytes long cannot match. */
export function ed25519SignaturesOf(signatures: readonly string[]): Uint8Array[] {
  return signatures
    .filter((versioned) => versioned.startsWith("v1a,"))
    .map((versioned) => decodeBase64(versioned.slice(4)))
    .filter((bytes) => bytes.length === 64);
}

export function isPublicKeySecret(secret: string): boolean {
  return secret.startsWith(PUBLIC_KEY_PREFIX);
}

/**
 * The secrets by kind, each checked now so that a bad one fails at start-up rather than on the
 * first webhook: HMAC secrets first, then public keys.
 */
export function splitStandardSecrets(secrets: readonly string[]): { hmac: string[]; ed25519: string[] } {
  const hmac = secrets.filter((secret) => !isPublicKeySecret(secret));
  const ed25519 = secrets.filter(isPublicKeySecret);
  hmac.forEach(standardSecretBytes);
  ed25519.forEach(ed25519PublicKeyBytes);
  return { hmac, ed25519 };
}

/** `whsec_<base64>` decodes to its bytes; any other secret is used as its UTF-8 bytes. */
export function standardSecretBytes(secret: string): Uint8Array {
  const key = secret.startsWith(SECRET_PREFIX)
    ? decodeBase64(secret.slice(SECRET_PREFIX.length))
    : new TextEncoder().encode(secret);
  if (key.length === 0) throw new FinalityError("invalid-config", "a webhook secret must not be empty");
  return key;
}

/** `whpk_<base64>`: the 32 raw bytes of an ed25519 public key. */
export function ed25519PublicKeyBytes(secret: string): Uint8Array {
  const raw = decodeBase64(secret.slice(PUBLIC_KEY_PREFIX.length));
  if (raw.length !== 32)
    throw new FinalityError("invalid-config", "a whpk_ key must be the 32 bytes of an ed25519 public key");
  return raw;
}
