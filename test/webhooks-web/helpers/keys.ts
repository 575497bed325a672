import { createHmac, generateKeyPairSync, type KeyObject, sign } from "node:crypto";

/** A few ed25519 key pairs, made once: fast-check picks among them by index. */
export const ED25519_PAIRS = Array.from({ length: 3 }, () => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = Buffer.from(publicKey.export({ format: "jwk" }).x as string, "base64url");
  return { secret: `whpk_${raw.toString("base64")}`, privateKey };
});

/** The signed content of both Standard Webhooks versions. */
export function standardContent(id: string, timestamp: string, body: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
}

export function ed25519Signature(privateKey: KeyObject, content: Uint8Array): string {
  return `v1a,${sign(null, content, privateKey).toString("base64")}`;
}

export function hmacDigest(key: string | Buffer, content: Uint8Array, encoding: "hex" | "base64"): string {
  return createHmac("sha256", key).update(content).digest(encoding);
}
