import type { JSONWebKeySet, JWTVerifyGetKey } from "jose";
import { FinalityError, toError } from "../core/errors.js";
import { loadOnce } from "../core/load-once.js";
import { LIMITS } from "../core/validation.js";
import { type ReceivedWebhookHeaders, signatureError, type VerifiedWebhook } from "./signature-common.js";
import { sha256Hex } from "./web-crypto-keys.js";

/**
 * A webhook signed with a JWT in a header, checked against a JWKS: Gemini's per-request
 * ("dynamic") webhooks put an RS256 JWT in `Webhook-Signature`
 * (https://ai.google.dev/gemini-api/docs/webhooks). jose does the JOSE work: key selection by
 * `kid`, the algorithm allow-list, `exp`/`nbf`/`aud`/`iss`, and a cached remote key set
 * (refetched at most every 30 s when an unknown `kid` shows up, so a rotated key is picked up).
 *
 * Google does not document the claims (issuer, audience, lifetime) nor any binding of the body to
 * the token, so this checks what it can (alg RS256, `exp` required, the configured audience and
 * issuer) and the Gemini adapter never trusts the body of such a delivery: it fetches the object.
 */
interface JwtVerifierOptions {
  /** A JWKS URL (fetched and cached) or the key set itself (tests, air-gapped set-ups). */
  jwks: string | JSONWebKeySet;
  audience: string | readonly string[];
  issuer?: string | readonly string[] | undefined;
  algorithms?: readonly string[];
  /** Seconds of clock skew allowed on `exp`/`nbf`/`iat`. */
  clockToleranceSeconds?: number;
  now: () => number;
}

/**
 * jose (0.5–2.4 MiB of a `serve`, issue 29) is used here only by Gemini's per-request webhooks: it
 * is imported by the first check, not when the verifier is made (at start, for every Gemini
 * provider with `jwt` configured), so a service that never gets such a webhook never loads it.
 */
const loadJose = loadOnce(() => import("jose"));

export function createJwtVerifier(options: JwtVerifierOptions) {
  // Checked and copied now, as jose's own constructors did when they ran here: a bad URL or key set
  // still fails where the verifier is made, and a caller changing its key set later changes nothing.
  const jwks = typeof options.jwks === "string" ? new URL(options.jwks) : localKeySet(options.jwks);
  // One key set per verifier (the remote one caches the keys it fetched), made on the first check.
  const loadKeys = loadOnce(async (): Promise<JWTVerifyGetKey> => {
    const jose = await loadJose();
    return jwks instanceof URL
      ? jose.createRemoteJWKSet(jwks, { timeoutDuration: 5000 })
      : jose.createLocalJWKSet(jwks);
  });
  return async (
    token: string,
    headers: ReceivedWebhookHeaders,
    body?: Uint8Array,
  ): Promise<VerifiedWebhook> => {
    // Outside the try below: a failure to load jose is not a refused token (an unexpected error, 500).
    const jose = await loadJose();
    const keys = await loadKeys();
    try {
      const { payload } = await jose.jwtVerify(token, keys, {
        algorithms: [...(options.algorithms ?? ["RS256"])],
        audience: [options.audience].flat(),
        ...(options.issuer === undefined ? {} : { issuer: [options.issuer].flat() }),
        requiredClaims: ["exp"],
        clockTolerance: options.clockToleranceSeconds ?? 60,
        currentDate: new Date(options.now()),
      });
      const id = await deliveryId(headers.id, payload.jti, token, body ?? new Uint8Array());
      return { id, timestampSeconds: payload.iat ?? Math.floor(options.now() / 1000), bodySigned: false };
    } catch (error) {
      if (keySetUnavailable(error, jose.errors)) {
        // The token may be good: we could not get the keys to tell. A 5xx makes the sender retry.
        throw new FinalityError(
          "internal",
          `the JWKS could not be fetched: ${toError(error).message}; retry later`,
          {
            details: { reason: "jwks-unavailable" },
          },
        );
      }
      throw signatureError("no-matching-signature", `the webhook JWT was refused: ${toError(error).message}`);
    }
  };
}

/**
 * jose's remote key set fails with a timeout, a plain JOSEError for an answer other than 200, or
 * the fetch's own error (not a JOSEError) when the URL cannot be reached; a key set that is not one
 * is JWKSInvalid. Everything else (signature, claims, no matching key) is about the token.
 */
function keySetUnavailable(error: unknown, errors: typeof import("jose").errors): boolean {
  if (!(error instanceof errors.JOSEError)) return true;
  return (
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid ||
    error.code === errors.JOSEError.code
  );
}

/**
 * The key set, refused as jose's createLocalJWKSet refuses it (not a plain object whose `keys` are
 * plain objects), and copied as jose copies it, so that later changes to the caller's object change
 * nothing.
 */
function localKeySet(jwks: JSONWebKeySet): JSONWebKeySet {
  const plain = (value: unknown): value is { keys?: unknown } => {
    if (typeof value !== "object" || value === null) return false;
    const prototype = Object.getPrototypeOf(value);
    return prototype === null || prototype === Object.prototype;
  };
  if (!plain(jwks) || !Array.isArray(jwks.keys) || !jwks.keys.every(plain))
    throw new TypeError("JSON Web Key Set malformed");
  return structuredClone(jwks);
}

/** Looks like a compact JWS (three base64url parts), as opposed to `v1,<base64>` signatures. */
export function isCompactJwt(value: string | null | undefined): value is string {
  return typeof value === "string" && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(value);
}

/**
 * `webhook-id` when sent (stable across retries). Else a name from the token (its `jti`, or the
 * token itself) AND the body: the token does not cover the body, and a sender that signs several
 * events with one token (a cached token, as Google does for its OIDC-signed pushes) would
 * otherwise have every event after the first dropped as a duplicate of it, a completion included.
 * The same token with the same body (a redelivery) is still one delivery. SHA-256 by WebCrypto,
 * so that this module runs on Workers too.
 */
async function deliveryId(
  header: string | null | undefined,
  jti: string | undefined,
  token: string,
  body: Uint8Array,
): Promise<string> {
  if (header && header.length <= LIMITS.deliveryIdLength) return header;
  const name = await sha256Hex(new TextEncoder().encode(jti ? `jti:${jti}` : token));
  return `jwt:${name}:${await sha256Hex(body)}`;
}
