import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalBase64Bytes,
  decodeBase64,
  encodeBase64,
  encodeHex,
  hexBytes,
} from "../../src/webhooks/byte-encoding.js";

// Secrets and v1a signatures are decoded without Buffer on Workers; they must give the same bytes
// as Buffer on Node, whatever the sender wrote.

const base64ish = fc
  .array(
    fc.oneof(
      fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_="),
      fc.constantFrom("=", " ", "\n", "!", "\u0000", "\u00e9", "\u0100", "\u0141", "\u013d", "\ud83d"),
      fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
    ),
    { maxLength: 120 },
  )
  .map((characters) => characters.join(""));

describe("base64 and hex without Buffer", () => {
  it("decodeBase64 reads any text as Buffer.from(text, 'base64') does", () => {
    fc.assert(
      fc.property(base64ish, (text) => {
        expect(Buffer.from(decodeBase64(text))).toEqual(Buffer.from(text, "base64"));
      }),
      { numRuns: 5000 },
    );
  });

  it("encodeBase64 writes what Buffer writes, and decodes back", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const text = encodeBase64(bytes);
        expect(text).toBe(Buffer.from(bytes).toString("base64"));
        expect(decodeBase64(text)).toEqual(bytes);
        expect(canonicalBase64Bytes(text, bytes.length)).toEqual(bytes);
      }),
    );
  });

  it("canonicalBase64Bytes refuses other spellings of the same bytes and other lengths", () => {
    const text = Buffer.alloc(32, 0xfb).toString("base64");
    expect(canonicalBase64Bytes(text, 32)).not.toBeNull();
    for (const other of [text.replace(/=$/, ""), text.replace(/\+/g, "-"), ` ${text}`, `${text}=`])
      expect(canonicalBase64Bytes(other, 32)).toBeNull();
    expect(canonicalBase64Bytes(text, 31)).toBeNull();
    // The last character's two spare bits must be zero, as an encoder writes them.
    expect(canonicalBase64Bytes(`${text.slice(0, 42)}/=`, 32)).toBeNull();
  });

  it("hexBytes reads lower-case hex of the given length only", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 40 }), (bytes) => {
        const hex = encodeHex(bytes);
        expect(hex).toBe(Buffer.from(bytes).toString("hex"));
        expect(hexBytes(hex, bytes.length)).toEqual(bytes);
        expect(hexBytes(hex, bytes.length + 1)).toBeNull();
        if (/[a-f]/.test(hex)) expect(hexBytes(hex.toUpperCase(), bytes.length)).toBeNull();
      }),
    );
    expect(hexBytes("0g", 1)).toBeNull();
  });
});
