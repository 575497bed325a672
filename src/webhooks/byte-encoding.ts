/**
 * Base64 and hex without Buffer, so that the WebCrypto verifiers (Workers) read secrets and
 * signatures exactly as the node:crypto ones do.
 */

const BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const EQUALS = 0x3d;

/** Each byte's value in base64 (both the standard and the URL-safe alphabet), -1 for any other. */
const BASE64_VALUES = (() => {
  const values = new Int8Array(256).fill(-1);
  for (let i = 0; i < BASE64_ALPHABET.length; i++) values[BASE64_ALPHABET.charCodeAt(i)] = i;
  values["-".charCodeAt(0)] = 62;
  values["_".charCodeAt(0)] = 63;
  return values;
})();

/**
 * Decodes base64 the way Node's `Buffer.from(text, "base64")` does, quirks included, since a
 * secret must give the same key on both paths: both alphabets are read, any other character is
 * skipped, the first "=" ends the input, a trailing partial group keeps its whole bytes, and a
 * character above U+00FF counts as its low byte (Node reads a two-byte string that way).
 */
export function decodeBase64(text: string): Uint8Array {
  const bytes = new Uint8Array(Math.ceil((text.length * 3) / 4));
  let written = 0;
  let group = 0;
  let groupLength = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i) & 0xff;
    if (code === EQUALS) break;
    const value = BASE64_VALUES[code] ?? -1;
    if (value < 0) continue;
    group = (group << 6) | value;
    groupLength++;
    if (groupLength === 4) {
      bytes[written++] = (group >> 16) & 0xff;
      bytes[written++] = (group >> 8) & 0xff;
      bytes[written++] = group & 0xff;
      group = 0;
      groupLength = 0;
    }
  }
  if (groupLength === 2) bytes[written++] = (group >> 4) & 0xff;
  if (groupLength === 3) {
    bytes[written++] = (group >> 10) & 0xff;
    bytes[written++] = (group >> 2) & 0xff;
  }
  return bytes.slice(0, written);
}

/** Standard base64 with padding, as node:crypto's `digest("base64")` writes it. */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * The bytes of `text` when it is exactly what `encodeBase64` writes for `byteLength` bytes, else
 * null. The node:crypto path compares base64 text, so any other spelling of the same bytes
 * (no padding, URL-safe letters, stray characters) must not match here either.
 */
export function canonicalBase64Bytes(text: string, byteLength: number): Uint8Array | null {
  const bytes = decodeBase64(text);
  return bytes.length === byteLength && encodeBase64(bytes) === text ? bytes : null;
}

/** The bytes of lower-case hex text of exactly `byteLength` bytes, else null. */
export function hexBytes(text: string, byteLength: number): Uint8Array | null {
  if (text.length !== byteLength * 2 || !/^[0-9a-f]*$/.test(text)) return null;
  const bytes = new Uint8Array(byteLength);
  for (let i = 0; i < byteLength; i++) bytes[i] = Number.parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

export function encodeHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
