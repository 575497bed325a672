import { FinalityError, toError } from "../../core/errors.js";
import { decodeBase64, hexBytes } from "../../webhooks/byte-encoding.js";
import type { SignatureHeaderCheck, WebhookVerifier } from "../../webhooks/receiver-types.js";
import {
  checkTimestamp,
  isWholeSeconds,
  type ReceivedWebhookHeaders,
  signatureError,
} from "../../webhooks/signature-common.js";
import { type CryptoKey, sha256Hex } from "../../webhooks/web-crypto-keys.js";

/**
 * fal webhook signatures (https://docs.fal.ai/model-apis/model-endpoints/webhooks, "Verifying
 * Your Webhook"): Ed25519 over `request_id \n user_id \n timestamp \n sha256hex(body)`, the first
 * three from the `X-Fal-Webhook-Request-Id`, `-User-Id` and `-Timestamp` headers, the signature
 * hex in `X-Fal-Webhook-Signature`, checked against any key of fal's published JWKS.
 *
 * WebCrypto only (Ed25519 `verify`, SHA-256) and fetch, so the same code runs on Node and on
 * Workers; fal publishes no verification library for JavaScript. jose is not used: this is not a
 * JWS, and its key sets pick one key by `kid`, which fal's headers do not carry.
 */
interface FalVerifierOptions {
  jwksUrl: string;
  toleranceSeconds: number;
  jwksCacheSeconds: number;
  userIds?: readonly string[] | undefined;
  now: () => number;
}

const HEADERS = {
  requestId: "x-fal-webhook-request-id",
  userId: "x-fal-webhook-user-id",
  timestamp: "x-fal-webhook-timestamp",
  signature: "x-fal-webhook-signature",
} as const;
const ED25519_SIGNATURE_BYTES = 64;
/** A key set fetched less than this long ago is not fetched again for an unmatched signature. */
export const FAL_JWKS_REFRESH_COOLDOWN_MS = 30_000;
const JWKS_TIMEOUT_MS = 5_000;
const encoder = new TextEncoder();

interface FalHeaders {
  requestId: string;
  userId: string;
  timestamp: string;
  signature: Uint8Array;
}

/** The four headers, the timestamp within tolerance and the account allowed; throws `signature-invalid`. */
function readFalHeaders(
  headers: ReceivedWebhookHeaders,
  options: Pick<FalVerifierOptions, "toleranceSeconds" | "userIds" | "now">,
): FalHeaders {
  const read = (name: string) => headers.get?.(name)?.trim() || undefined;
  const requestId = read(HEADERS.requestId);
  const userId = read(HEADERS.userId);
  const timestamp = read(HEADERS.timestamp);
  const signatureText = read(HEADERS.signature);
  if (!requestId || !userId || !timestamp || !signatureText)
    throw signatureError(
      "missing-headers",
      "X-Fal-Webhook-Request-Id, X-Fal-Webhook-User-Id, X-Fal-Webhook-Timestamp and X-Fal-Webhook-Signature are required",
    );
  if (!isWholeSeconds(timestamp))
    throw signatureError("bad-timestamp", "X-Fal-Webhook-Timestamp must be whole seconds since the epoch");
  checkTimestamp(Number(timestamp), options.now, options.toleranceSeconds);
  if (options.userIds !== undefined && !options.userIds.includes(userId))
    throw signatureError(
      "no-matching-signature",
      "the webhook was sent for a fal user this provider does not accept",
    );
  const signature = hexBytes(signatureText.toLowerCase(), ED25519_SIGNATURE_BYTES);
  if (signature === null)
    throw signatureError("no-matching-signature", "X-Fal-Webhook-Signature is not a hex Ed25519 signature");
  return { requestId, userId, timestamp, signature };
}

export function falHeaderCheck(options: FalVerifierOptions): SignatureHeaderCheck {
  return (headers) => void readFalHeaders(headers, options);
}

/**
 * The verifier: keys fetched on first use and cached for `jwksCacheSeconds`. A signature no cached
 * key matches makes one fresh fetch (fal rotated its keys) unless the set is younger than 30 s,
 * so forged deliveries cannot make every request fetch. A fetch that fails keeps the old keys;
 * with none at all the delivery is answered 5xx, so fal retries it.
 */
export function createFalVerifier(options: FalVerifierOptions): WebhookVerifier {
  const keys = falKeySet(options.jwksUrl, options.now);
  return async (body, headers) => {
    const sent = readFalHeaders(headers, options);
    const message = encoder.encode(
      `${sent.requestId}\n${sent.userId}\n${sent.timestamp}\n${await sha256Hex(body)}`,
    );
    const verified = { id: sent.requestId, timestampSeconds: Number(sent.timestamp), bodySigned: true };
    const maxAgeMs = options.jwksCacheSeconds * 1000;
    if (await anyKeyVerifies(await keys.current(maxAgeMs), sent.signature, message)) return verified;
    const refreshed = await keys.refreshed(FAL_JWKS_REFRESH_COOLDOWN_MS);
    if (refreshed !== null && (await anyKeyVerifies(refreshed, sent.signature, message))) return verified;
    throw signatureError("no-matching-signature", "no key of fal's JWKS matches X-Fal-Webhook-Signature");
  };
}

async function anyKeyVerifies(keys: readonly CryptoKey[], signature: Uint8Array, message: Uint8Array) {
  const checks = keys.map((key) => crypto.subtle.verify({ name: "Ed25519" }, key, signature, message));
  return (await Promise.all(checks)).includes(true);
}

interface KeySet {
  /** The cached keys, fetched first when there are none or they are older than `maxAgeMs`. */
  current(maxAgeMs: number): Promise<CryptoKey[]>;
  /** Fetched anew unless the cached set is younger than `cooldownMs` (then null). */
  refreshed(cooldownMs: number): Promise<CryptoKey[] | null>;
}

function falKeySet(url: string, now: () => number): KeySet {
  let cached: { keys: CryptoKey[]; fetchedAt: number } | null = null;
  // Concurrent deliveries share one fetch.
  let inFlight: Promise<CryptoKey[]> | null = null;
  const fetchKeys = (): Promise<CryptoKey[]> => {
    inFlight ??= loadKeys(url)
      .then((keys) => {
        cached = { keys, fetchedAt: now() };
        return keys;
      })
      .catch((error: unknown) => {
        // fal's key set unreachable: the keys we have are still fal's keys.
        if (cached !== null) return cached.keys;
        throw new FinalityError(
          "internal",
          `fal's JWKS could not be fetched: ${toError(error).message}; retry later`,
          {
            details: { reason: "jwks-unavailable" },
          },
        );
      })
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };
  return {
    current(maxAgeMs) {
      if (cached !== null && now() - cached.fetchedAt < maxAgeMs) return Promise.resolve(cached.keys);
      return fetchKeys();
    },
    async refreshed(cooldownMs) {
      if (cached !== null && now() - cached.fetchedAt < cooldownMs) return null;
      return fetchKeys();
    },
  };
}

/** The Ed25519 keys of a JWKS (`kty: OKP, crv: Ed25519, x`); other keys are skipped. */
async function loadKeys(url: string): Promise<CryptoKey[]> {
  const response = await fetch(url, {
    headers: { accept: "application/json" },
    // Not followed: a key set is taken from the configured URL only. ("error" is refused on
    // Workers; "manual" gives the 3xx, which is not ok below.)
    redirect: "manual",
    signal: AbortSignal.timeout(JWKS_TIMEOUT_MS),
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`GET ${url} answered ${response.status}`);
  }
  const document = (await response.json()) as { keys?: unknown };
  const jwks = Array.isArray(document.keys) ? document.keys : [];
  const keys: CryptoKey[] = [];
  for (const jwk of jwks as Record<string, unknown>[]) {
    if (jwk?.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string") continue;
    const raw = decodeBase64(jwk.x);
    if (raw.length !== 32) continue;
    keys.push(await crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]));
  }
  if (keys.length === 0) throw new Error(`GET ${url}: no Ed25519 key in the key set`);
  return keys;
}
