import { createHash } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { createJwtVerifier } from "../../src/webhooks/jwt-signature.js";

// Without webhook-id, a JWT-signed delivery is named by its token (the `jti`, or the token itself)
// and its body, with WebCrypto's SHA-256 (the same bytes as node:crypto's). The body is part of the
// name because the token does not cover it: one token reused for several events must not make the
// later ones duplicates of the first.

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const nowMs = 1_767_225_600_000;
let verify: ReturnType<typeof createJwtVerifier>;
let sign: (claims?: Record<string, unknown>) => Promise<string>;

beforeAll(async () => {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" };
  verify = createJwtVerifier({ jwks: { keys: [jwk] }, audience: "finality", now: () => nowMs });
  sign = (claims = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setAudience("finality")
      .setIssuedAt(nowMs / 1000)
      .setExpirationTime(nowMs / 1000 + 300)
      .sign(privateKey);
});

const headers = (token: string, id?: string) => ({ id, timestamp: undefined, signature: token });
const bytes = (text: string) => new TextEncoder().encode(text);

describe("JWT delivery id without webhook-id", () => {
  it("is jwt:<sha256 of the token>:<sha256 of the body>", async () => {
    const token = await sign();
    const delivery = await verify(token, headers(token), bytes('{"a":1}'));
    expect(delivery.id).toBe(`jwt:${sha256(token)}:${sha256('{"a":1}')}`);
    expect(delivery.bodySigned).toBe(false);
  });

  it("one token with two bodies is two deliveries; the same body again is one", async () => {
    const token = await sign({ jti: "tok-1" });
    const first = await verify(token, headers(token), bytes('{"type":"interaction.requires_action"}'));
    const second = await verify(token, headers(token), bytes('{"type":"interaction.completed"}'));
    const again = await verify(token, headers(token), bytes('{"type":"interaction.completed"}'));
    expect(first.id).not.toBe(second.id);
    expect(again.id).toBe(second.id);
    expect(second.id).toBe(`jwt:${sha256("jti:tok-1")}:${sha256('{"type":"interaction.completed"}')}`);
  });

  it("webhook-id, when sent, is the delivery id", async () => {
    const token = await sign({ jti: "tok-2" });
    expect((await verify(token, headers(token, "wh_1"), bytes("{}"))).id).toBe("wh_1");
  });
});

// jose is imported by the first check (issue 29), so the verifier checks and copies a key set
// given inline itself, where jose's createLocalJWKSet did it when the verifier was made.
describe("a key set given inline", () => {
  it("is refused when the verifier is made, not at the first webhook, when it is no key set", () => {
    const make = (jwks: unknown) =>
      createJwtVerifier({ jwks: jwks as { keys: [] }, audience: "finality", now: () => nowMs });
    for (const jwks of [null, [], { keys: {} }, { keys: [1] }, { keys: [new Date()] }])
      expect(() => make(jwks)).toThrow("JSON Web Key Set malformed");
    expect(() => make({ keys: [] })).not.toThrow();
  });

  it("is copied: changing the caller's object afterwards changes nothing", async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256");
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: "k2", alg: "RS256" }] };
    const verifyK2 = createJwtVerifier({ jwks, audience: "finality", now: () => nowMs });
    jwks.keys = [];
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "k2" })
      .setAudience("finality")
      .setExpirationTime(nowMs / 1000 + 300)
      .sign(privateKey);
    expect((await verifyK2(token, headers(token, "wh_k2"), bytes("{}"))).id).toBe("wh_k2");
  });
});
