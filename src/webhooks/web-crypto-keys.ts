import { encodeHex } from "./byte-encoding.js";
import { ed25519PublicKeyBytes, standardSecretBytes } from "./schemes/standard-webhooks/header.js";

/**
 * WebCrypto keys and checks for the Workers path. `crypto.subtle` is read at each call (never
 * captured at load), so that tests can watch it.
 */

/** WebCrypto's key type, named through `crypto.subtle` (no DOM library in this build). */
export type CryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

const HMAC = { name: "HMAC", hash: "SHA-256" } as const;
const ED25519 = { name: "Ed25519" } as const;
const encoder = new TextEncoder();

// Importing a key costs more than checking one small body, so each secret is imported once. The
// promise is cached, not the key: concurrent first requests then share one import. A CryptoKey is
// not an I/O object tied to the request that made it (as a stream or a fetch is), so later
// requests of the same isolate may use it.
const keyCache = new Map<string, Promise<CryptoKey>>();
const KEY_CACHE_LIMIT = 1024;

function cachedKey(cacheKey: string, load: () => Promise<CryptoKey>): Promise<CryptoKey> {
  const cached = keyCache.get(cacheKey);
  if (cached !== undefined) return cached;
  const promise = load();
  // A failed import is not kept: the next call tries again (and sees the same error if it persists).
  promise.catch(() => {
    if (keyCache.get(cacheKey) === promise) keyCache.delete(cacheKey);
  });
  if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.clear();
  keyCache.set(cacheKey, promise);
  return promise;
}

/** A Standard Webhooks `v1` secret (`whsec_<base64>` or raw text), for signing and checking. */
export function standardHmacKey(secret: string): Promise<CryptoKey> {
  return cachedKey(`whsec\u0000${secret}`, async () => importHmacKey(standardSecretBytes(secret)));
}

/** A secret used as its UTF-8 bytes (the HMAC header and Stripe schemes). */
export function utf8HmacKey(secret: string): Promise<CryptoKey> {
  return cachedKey(`utf8\u0000${secret}`, async () => importHmacKey(encoder.encode(secret)));
}

/** A Standard Webhooks `v1a` public key, `whpk_<base64>`. */
export function ed25519Key(secret: string): Promise<CryptoKey> {
  return cachedKey(`whpk\u0000${secret}`, async () =>
    crypto.subtle.importKey("raw", ed25519PublicKeyBytes(secret), ED25519, false, ["verify"]),
  );
}

function importHmacKey(bytes: Uint8Array): Promise<CryptoKey> {
  // WebCrypto refuses an empty HMAC key, node:crypto takes it. HMAC pads a short key with zero
  // bytes, so one zero byte is the same key.
  const key = bytes.length === 0 ? new Uint8Array(1) : bytes;
  return crypto.subtle.importKey("raw", key, HMAC, false, ["sign", "verify"]);
}

/** Bytes in an HMAC-SHA256 digest: what a signature must decode to before it is checked. */
export const HMAC_SHA256_BYTES = 32;

/** Starts one check; HMAC checks go through `verify`, which compares in constant time. */
export function verifyHmac(
  key: Promise<CryptoKey>,
  signature: Uint8Array,
  data: Uint8Array,
): Promise<boolean> {
  return key.then((cryptoKey) => crypto.subtle.verify(HMAC, cryptoKey, signature, data));
}

export function verifyEd25519(
  key: Promise<CryptoKey>,
  signature: Uint8Array,
  data: Uint8Array,
): Promise<boolean> {
  return key.then((cryptoKey) => crypto.subtle.verify(ED25519, cryptoKey, signature, data));
}

export async function signHmac(key: Promise<CryptoKey>, data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign(HMAC, await key, data));
}

/**
 * True when any check passed. The caller starts every (secret × signature) check before this
 * awaits them: they run side by side, and a rotation with several secrets costs one round trip
 * to the crypto backend, not one per pair.
 */
export async function anyVerified(checks: readonly Promise<boolean>[]): Promise<boolean> {
  if (checks.length === 0) return false;
  return (await Promise.all(checks)).includes(true);
}

/** The signed bytes: the text the scheme puts before the body, then the body. */
export function signedContent(prefix: string, body: string | Uint8Array): Uint8Array {
  const head = encoder.encode(prefix);
  const tail = typeof body === "string" ? encoder.encode(body) : body;
  const content = new Uint8Array(head.length + tail.length);
  content.set(head);
  content.set(tail, head.length);
  return content;
}

export async function sha256Hex(data: Uint8Array): Promise<string> {
  return encodeHex(new Uint8Array(await crypto.subtle.digest("SHA-256", data)));
}
