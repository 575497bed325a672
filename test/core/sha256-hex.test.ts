import { createHash, hash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
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

  it("uses node:crypto's one-shot hash where it has one, else createHash (Workers' nodejs_compat)", async () => {
    const withHash = { hash: vi.fn(hash), createHash: vi.fn(createHash) };
    await expectAbcThrough(withHash);
    expect(withHash.hash).toHaveBeenCalledTimes(1);
    expect(withHash.createHash).not.toHaveBeenCalled();
    const withoutHash = { createHash: vi.fn(createHash) };
    await expectAbcThrough(withoutHash);
    expect(withoutHash.createHash).toHaveBeenCalledTimes(1);
  });
});

/** Loads sha256-hex.ts afresh with `hashing` as node:crypto, and hashes "abc" through it. */
async function expectAbcThrough(hashing: object): Promise<void> {
  const getBuiltinModule = vi.fn(() => hashing);
  vi.stubGlobal("process", { ...process, getBuiltinModule });
  vi.resetModules();
  try {
    const loaded = await import("../../src/core/sha256-hex.js");
    expect(loaded.sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(getBuiltinModule).toHaveBeenCalledWith("node:crypto");
  } finally {
    vi.unstubAllGlobals();
    vi.resetModules();
  }
}
