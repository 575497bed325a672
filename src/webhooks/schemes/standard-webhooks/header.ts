import { FinalityError } from "../../../core/errors.js";
import { decodeBase64 } from "../../byte-encoding.js";
import {
  checkTimestamp,
  isWholeSeconds,
  type ReceivedWebhookHeaders,
  signatureError,
} from "../../signature-common.js";

/**
 * Standard Webhooks (https://www.standardwebhooks.com/), the part both runtimes share: headers,
 * secrets and refusals (node.ts and web.ts differ only in the cryptography). The sender signs
 * `${webhook-id}.${webhook-timestamp}.${raw body}` with HMAC-SHA256 and sends
 * `webhook-signature: v1,<base64>` (several space-separated signatures during a key rotation), or
 * `v1a,<base64>` (ed25519) for secrets given as public keys, `whpk_<base64 of the 32 raw bytes>`.
 */

const SECRET_PREFIX = "whsec_";
const PUBLIC_KEY_PREFIX = "whpk_";

export interface StandardWebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
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

/** What is signed before the body, and the headers that carry `base64Signature` (a `v1` HMAC). */
export function signingPrefixOf(input: SignInput): string {
  return `${input.id}.${Math.floor(input.timestampSeconds)}.`;
}

export function signedHeaders(input: SignInput, base64Signature: string): StandardWebhookHeaders {
  const timestamp = String(Math.floor(input.timestampSeconds));
  return {
    "webhook-id": input.id,
    "webhook-timestamp": timestamp,
    "webhook-signature": `v1,${base64Signature}`,
  };
}

/** A Standard Webhooks delivery whose headers are present and whose timestamp is fresh. */
interface StandardWebhookMessage {
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
