import type { CryptoKey } from "jose";
import { toError } from "../../core/errors.js";
import { loadOnce } from "../../core/load-once.js";
import type { Authorized } from "../status-client.js";

/** The fields of a Google service account key file (`type: service_account`) that are used here. */
export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string | undefined;
  token_uri?: string | undefined;
}

interface TokenSourceOptions {
  key: ServiceAccountKey;
  /** Where the signed assertion is exchanged; the key's `token_uri` is the usual value. */
  tokenUri: string;
  scope: string;
  now: () => number;
  /** A token this close to its expiry is replaced before it is used. */
  refreshBeforeMs: number;
  /** Time allowed for one exchange at the token URI. */
  timeoutMs: number;
}

/** Headers for one request: `authorization: Bearer <token>`, or why there is no token. */
type TokenSource = (signal: AbortSignal) => Promise<Authorized>;

const ASSERTION_LIFETIME_S = 3600;

/** jose (0.5–2.4 MiB of a `serve`, issue 29): imported for the first token, not by every `serve`. */
const loadJose = loadOnce(() => import("jose"));
const GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/**
 * OAuth 2.0 for service accounts (https://developers.google.com/identity/protocols/oauth2/service-account#httprest):
 * a JWT signed RS256 with the account's private key (`iss` the account's email, `aud` the token
 * URI, `scope`, an hour's lifetime) is exchanged at the token URI for an access token. The token is
 * kept until `refreshBeforeMs` before it expires; callers that need one while it is being fetched
 * wait for that one fetch. jose signs with WebCrypto, so this runs on Workers as on Node.
 *
 * A 4xx from the token endpoint (a revoked key, a wrong clock) is a refusal, reported like a
 * refused API key; a 5xx or an unreachable endpoint is thrown, and the poll retried later. Neither
 * the private key nor the assertion is ever part of a message.
 */
export function createServiceAccountTokenSource(options: TokenSourceOptions): TokenSource {
  let cached: { token: string; expiresAt: number } | null = null;
  let inFlight: Promise<Authorized> | null = null;
  let signingKey: Promise<CryptoKey> | null = null;

  async function fetchToken(signal: AbortSignal): Promise<Authorized> {
    // Loaded before the key is read: a failed import is not reported as an unreadable key.
    const { importPKCS8, SignJWT } = await loadJose();
    signingKey ??= importPKCS8(options.key.private_key, "RS256").catch((error: unknown) => {
      signingKey = null;
      throw new Error(
        `the service account's private_key cannot be read as a PKCS#8 RSA key (${toError(error).name})`,
      );
    });
    const key = await signingKey;
    const issuedAt = Math.floor(options.now() / 1000);
    const assertion = await new SignJWT({ scope: options.scope })
      .setProtectedHeader({
        alg: "RS256",
        typ: "JWT",
        ...(options.key.private_key_id ? { kid: options.key.private_key_id } : {}),
      })
      .setIssuer(options.key.client_email)
      .setAudience(options.tokenUri)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ASSERTION_LIFETIME_S)
      .sign(key);
    const response = await fetch(options.tokenUri, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ grant_type: GRANT_TYPE, assertion }).toString(),
      signal,
      redirect: "manual",
    });
    const text = await response.text();
    const body = parseObject(text);
    if (response.status >= 400 && response.status < 500) {
      // Google's answer names the problem (`invalid_grant`, "Invalid JWT Signature."), never the key.
      const reason = [body.error, body.error_description]
        .filter((part) => typeof part === "string")
        .join(": ");
      return {
        kind: "refused",
        status: response.status,
        message: `the token endpoint refused the service account ${options.key.client_email} (${response.status}${reason ? `, ${reason.slice(0, 200)}` : ""})`,
      };
    }
    if (response.status < 200 || response.status > 299)
      throw new Error(`the token endpoint answered ${response.status}`);
    const token = body.access_token;
    const expiresIn = body.expires_in;
    if (typeof token !== "string" || token === "" || typeof expiresIn !== "number" || !(expiresIn > 0))
      throw new Error("the token endpoint's answer has no access_token and expires_in");
    cached = { token, expiresAt: options.now() + expiresIn * 1000 };
    return bearer(token);
  }

  return (signal) => {
    if (cached !== null && options.now() < cached.expiresAt - options.refreshBeforeMs)
      return Promise.resolve(bearer(cached.token));
    // One fetch at a time: the polls that need a token meanwhile share it. It has its own
    // timeout, not the first caller's signal, or that caller's abort would fail them all.
    inFlight ??= fetchToken(AbortSignal.timeout(options.timeoutMs)).finally(() => {
      inFlight = null;
    });
    return untilAborted(inFlight, signal);
  };
}

/** `promise`, or a rejection as soon as `signal` aborts (the shared fetch goes on for the others). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function bearer(token: string): Authorized {
  return { kind: "headers", headers: { authorization: `Bearer ${token}` } };
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
