import { createHash } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { createJwtVerifier } from "../../src/webhooks/jwt-signature.js";

// Without webhook-id or jti, a JWT-signed delivery is named by the token's SHA-256, now computed
// with WebCrypto: the same id as node:crypto's, so a redelivery from before the change is a duplicate.

describe("JWT delivery id without webhook-id or jti", () => {
  it("is jwt:<sha256 hex of the token>", async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256");
    const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" };
    const nowMs = 1_767_225_600_000;
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setAudience("finality")
      .setIssuedAt(nowMs / 1000)
      .setExpirationTime(nowMs / 1000 + 300)
      .sign(privateKey);
    const verify = createJwtVerifier({ jwks: { keys: [jwk] }, audience: "finality", now: () => nowMs });
    const delivery = await verify(token, { id: undefined, timestamp: undefined, signature: token });
    expect(delivery.id).toBe(`jwt:${createHash("sha256").update(token).digest("hex")}`);
    expect(delivery.bodySigned).toBe(false);
  });
});
