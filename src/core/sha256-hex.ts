import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

interface NodeHashing {
  /** One-shot (Node 20.12 and later): a third of createHash's time, which builds a stream. */
  hash?(algorithm: "sha256", text: string, encoding: "hex"): string;
  createHash(algorithm: "sha256"): {
    update(text: string, encoding: "utf8"): { digest(encoding: "hex"): string };
  };
}

// node:crypto where the runtime has it (Node; Workers only with `nodejs_compat`), found without an
// import so that this module loads on every runtime: every effect's key is a hash, and @noble's
// JavaScript SHA-256 cost an effect ~25,000 instructions against a few thousand for node:crypto.
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.("node:crypto") as NodeHashing | undefined;

/**
 * The SHA-256 of `text` encoded as UTF-8 (a lone surrogate as U+FFFD), in lower-case hex: the same
 * on every runtime, whichever implementation computes it.
 */
export function sha256Hex(text: string): string {
  if (nodeCrypto === undefined) return sha256HexPortable(text);
  return nodeCrypto.hash !== undefined
    ? nodeCrypto.hash("sha256", text, "hex")
    : nodeCrypto.createHash("sha256").update(text, "utf8").digest("hex");
}

/** `sha256Hex` in JavaScript alone (@noble/hashes): what runtimes without node:crypto use. */
export function sha256HexPortable(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}
