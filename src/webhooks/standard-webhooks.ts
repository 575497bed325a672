import { createHmac, createPublicKey, type KeyObject, timingSafeEqual, verify } from "node:crypto";
import { FinalityError } from "../core/errors.js";

/**
 * Standard Webhooks (https://www.standardwebhooks.com/): the sender signs
 * `${webhook-id}.${webhook-timestamp}.${raw body}` with HMAC-SHA256 and sends
 * `webhook-signature: v1,<base64>` (several space-separated signatures during a key rotation).
 *
 * Synchronous node:crypto on purpose: ~5x faster than the official package and ~10x faster than
 * awaiting WebCrypto one request at a time, and verification sits on the hottest path.
 *
 * The spec's asymmetric variant `v1a` (ed25519 over the same content) is accepted for secrets
 * given as public keys, `whpk_<base64 of the 32 raw key bytes>`; a sender that holds only a
 * public key cannot sign, so outgoing effects stay `v1`.
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

/** Signs one message; returns the headers to send with `body`. */
export function signStandardWebhook(input: SignInput): StandardWebhookHeaders {
  const timestamp = String(Math.floor(input.timestampSeconds));
  const signature = hmacBase64(secretKey(input.secret), input.id, timestamp, input.body);
  return { "webhook-id": input.id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` };
}

export interface StandardWebhookVerifierOptions {
  /**
   * Every secret currently accepted (several during a rotation): `whsec_<base64>` or raw text for
   * `v1`, `whpk_<base64>` (an ed25519 public key) for `v1a`.
   */
  secrets: readonly string[];
  toleranceSeconds?: number;
  /** Epoch milliseconds; injected so that tests control time. */
  now: () => number;
}

export interface StandardWebhookVerifier {
  /** Checks the headers against the raw body bytes; throws `signature-invalid` when they do not match. */
  verify(body: Uint8Array, headers: ReceivedWebhookHeaders): VerifiedWebhook;
}

export function createStandardWebhookVerifier(
  options: StandardWebhookVerifierOptions,
): StandardWebhookVerifier {
  const keys = options.secrets.filter((s) => !s.startsWith(PUBLIC_KEY_PREFIX)).map(secretKey);
  const publicKeys = options.secrets.filter((s) => s.startsWith(PUBLIC_KEY_PREFIX)).map(ed25519PublicKey);
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  return {
    verify(body, headers) {
      const { id, timestamp, signature } = headers;
      if (!id || !timestamp || !signature) throw signatureError("missing-headers");
      const timestampSeconds = parseTimestamp(timestamp);
      const nowSeconds = Math.floor(options.now() / 1000);
      if (nowSeconds - timestampSeconds > toleranceSeconds) throw signatureError("timestamp-too-old");
      if (timestampSeconds - nowSeconds > toleranceSeconds) throw signatureError("timestamp-too-new");
      const passed = signature.split(" ");
      if (publicKeys.length > 0 && verifyV1a(publicKeys, passed, id, String(timestampSeconds), body))
        return { id, timestampSeconds };
      for (const key of keys) {
        const expected = Buffer.from(hmacBase64(key, id, String(timestampSeconds), body));
        for (const versioned of passed) {
          if (!versioned.startsWith("v1,")) continue;
          const candidate = Buffer.from(versioned.slice(3));
          if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) {
            return { id, timestampSeconds };
          }
        }
      }
      throw signatureError("no-matching-signature");
    },
  };
}

/** `v1a,<base64 ed25519 signature>` over the same `${id}.${timestamp}.${body}` as v1. */
function verifyV1a(
  publicKeys: readonly KeyObject[],
  passed: readonly string[],
  id: string,
  timestamp: string,
  body: Uint8Array,
): boolean {
  const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
  for (const versioned of passed) {
    if (!versioned.startsWith("v1a,")) continue;
    const signatureBytes = Buffer.from(versioned.slice(4), "base64");
    if (signatureBytes.length !== 64) continue;
    for (const key of publicKeys) if (verify(null, content, key, signatureBytes)) return true;
  }
  return false;
}

/** `whpk_<base64>`: the 32 raw bytes of an ed25519 public key. */
export function ed25519PublicKey(secret: string): KeyObject {
  const raw = Buffer.from(secret.slice(PUBLIC_KEY_PREFIX.length), "base64");
  if (raw.length !== 32)
    throw new FinalityError("invalid-config", "a whpk_ key must be the 32 bytes of an ed25519 public key");
  return createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") },
    format: "jwk",
  });
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

function parseTimestamp(text: string): number {
  // Digits only: parseInt would accept "12abc" and let two headers sign as one timestamp.
  if (!/^[0-9]{1,15}$/.test(text)) throw signatureError("bad-timestamp");
  return Number(text);
}

function hmacBase64(key: Buffer, id: string, timestamp: string, body: string | Uint8Array): string {
  return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest("base64");
}

// Decoding a secret costs more than the HMAC of a small body, so each is decoded once.
const keyCache = new Map<string, Buffer>();
const KEY_CACHE_LIMIT = 1024;

/** `whsec_<base64>` decodes to its bytes; any other secret is used as its UTF-8 bytes. */
export function secretKey(secret: string): Buffer {
  const cached = keyCache.get(secret);
  if (cached !== undefined) return cached;
  const key = secret.startsWith(SECRET_PREFIX)
    ? Buffer.from(secret.slice(SECRET_PREFIX.length), "base64")
    : Buffer.from(secret, "utf8");
  if (key.length === 0) throw new FinalityError("invalid-config", "a webhook secret must not be empty");
  if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.clear();
  keyCache.set(secret, key);
  return key;
}
