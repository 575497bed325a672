import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sha256Hex, sha256HexPortable } from "../../src/core/sha256-hex.js";

describe("sha256Hex", () => {
  it("is the published SHA-256 of the text's UTF-8", () => {
    // FIPS 180-2's "abc" and the empty string.
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("node:crypto's and the portable JavaScript's agree on any text, lone surrogates included", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (text) => {
        expect(sha256Hex(text)).toBe(sha256HexPortable(text));
      }),
      { numRuns: 500 },
    );
  });
});
