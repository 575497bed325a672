import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { secretKey } from "../../src/webhooks/schemes/standard-webhooks/node.js";
import { ED25519_PAIRS, ed25519Signature, hmacDigest, standardContent } from "./helpers/keys.js";
import { expectSameOutcome, reasonOf } from "./helpers/outcome.js";

// The WebCrypto verifier must accept and refuse exactly what the node:crypto one does, with the
// same result or the same error (code, reason, message), on generated deliveries.

const NOW_MS = 1_767_225_600_123;
const NOW_SECONDS = Math.floor(NOW_MS / 1000);

const hmacSecret = fc.oneof(
  fc
    .uint8Array({ minLength: 1, maxLength: 48 })
    .map((bytes) => `whsec_${Buffer.from(bytes).toString("base64")}`),
  fc.string({ minLength: 1, maxLength: 24, unit: "grapheme" }),
  // Odd spellings that Node decodes leniently (or to nothing: then both refuse the configuration).
  fc.string({ maxLength: 24 }).map((text) => `whsec_${text}`),
);
const publicKey = fc.integer({ min: 0, max: ED25519_PAIRS.length - 1 });

/** Who signs each `webhook-signature` entry. */
const signer = fc.oneof(
  fc.record({ kind: fc.constant("configured-hmac" as const), index: fc.nat() }),
  fc.record({ kind: fc.constant("foreign-hmac" as const), secret: hmacSecret }),
  fc.record({ kind: fc.constant("ed25519" as const), pair: publicKey }),
  fc.record({ kind: fc.constant("unpadded-hmac" as const), index: fc.nat() }),
  fc.record({ kind: fc.constant("junk" as const), text: fc.string({ maxLength: 100 }) }),
);

const mutation = fc.constantFrom(
  "none",
  "tampered-body",
  "tampered-signature",
  "missing-id",
  "missing-timestamp",
  "missing-signature",
  "empty-signature",
  "bad-timestamp",
  "leading-zero-timestamp",
);

const scenario = fc.record({
  hmacSecrets: fc.array(hmacSecret, { maxLength: 3 }),
  publicKeys: fc.uniqueArray(publicKey, { maxLength: 2 }),
  signers: fc.array(signer, { minLength: 1, maxLength: 4 }),
  id: fc.string({ minLength: 1, maxLength: 40, unit: "grapheme" }),
  body: fc.uint8Array({ maxLength: 300 }),
  toleranceSeconds: fc.constantFrom(undefined, 1, 60, 300),
  offsetSeconds: fc.oneof(fc.integer({ min: -400, max: 400 }), fc.integer({ min: -1e9, max: 1e9 })),
  mutation,
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function signatureOf(s: Scenario, who: Scenario["signers"][number], content: Buffer): string {
  switch (who.kind) {
    case "configured-hmac":
    case "unpadded-hmac": {
      const secret = s.hmacSecrets[who.index % Math.max(s.hmacSecrets.length, 1)] ?? "whsec_AAAA";
      const signature = `v1,${hmacDigestOrEmpty(secret, content)}`;
      return who.kind === "configured-hmac" ? signature : signature.replace(/=+$/, "");
    }
    case "foreign-hmac":
      return `v1,${hmacDigestOrEmpty(who.secret, content)}`;
    case "ed25519":
      return ed25519Signature(
        (ED25519_PAIRS[who.pair] as (typeof ED25519_PAIRS)[number]).privateKey,
        content,
      );
    case "junk":
      return who.text;
  }
}

/** A secret that decodes to nothing cannot sign: its "signature" is then junk. */
function hmacDigestOrEmpty(secret: string, content: Buffer): string {
  try {
    return hmacDigest(secretKey(secret), content, "base64");
  } catch {
    return "";
  }
}

function flipOne(text: string): string {
  if (text.length === 0) return "x";
  const at = Math.floor(text.length / 2);
  const replaced = text[at] === "A" ? "B" : "A";
  return text.slice(0, at) + replaced + text.slice(at + 1);
}

function deliveryOf(s: Scenario) {
  const timestamp = String(NOW_SECONDS + s.offsetSeconds);
  const content = standardContent(s.id, timestamp, s.body);
  let signatures = s.signers.map((who) => signatureOf(s, who, content));
  let body = s.body;
  const headers: Record<string, string> = {
    "webhook-id": s.id,
    "webhook-timestamp": timestamp,
  };
  if (s.mutation === "tampered-body")
    body = body.length === 0 ? Uint8Array.of(1) : body.map((b, i) => (i === 0 ? b ^ 1 : b));
  if (s.mutation === "tampered-signature") signatures = signatures.map(flipOne);
  headers["webhook-signature"] = signatures.join(" ");
  if (s.mutation === "missing-id") delete headers["webhook-id"];
  if (s.mutation === "missing-timestamp") delete headers["webhook-timestamp"];
  if (s.mutation === "missing-signature") delete headers["webhook-signature"];
  if (s.mutation === "empty-signature") headers["webhook-signature"] = "";
  if (s.mutation === "bad-timestamp") headers["webhook-timestamp"] = `${timestamp}abc`;
  if (s.mutation === "leading-zero-timestamp") headers["webhook-timestamp"] = `0${timestamp}`;
  return { body, headers };
}

function configOf(s: Scenario) {
  const secrets = [
    ...s.hmacSecrets,
    ...s.publicKeys.map((i) => (ED25519_PAIRS[i] as (typeof ED25519_PAIRS)[number]).secret),
  ];
  return { secrets, toleranceSeconds: s.toleranceSeconds };
}

describe("Standard Webhooks: WebCrypto and node:crypto agree", () => {
  it("on generated deliveries: good, tampered, stale or future, rotated, several signatures, missing headers", async () => {
    const seen = new Set<unknown>();
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        seen.add(reasonOf(await expectSameOutcome(configOf(s), NOW_MS, deliveryOf(s))));
      }),
      { numRuns: 600 },
    );
    // The generator reaches every outcome, so agreement is not only agreement on refusals.
    expect([...seen].sort()).toEqual(
      [
        "accepted",
        "bad-timestamp",
        "missing-headers",
        "no-matching-signature",
        "timestamp-too-new",
        "timestamp-too-old",
        "invalid-config",
      ].sort(),
    );
  });

  it("accepts a fresh delivery signed with any one of the configured secrets (rotation)", async () => {
    await fc.assert(
      fc.asyncProperty(
        scenario.filter((s) => s.hmacSecrets.length > 0),
        fc.nat(),
        async (s, index) => {
          const good = {
            ...s,
            hmacSecrets: s.hmacSecrets.map(
              (_, i) => `whsec_${Buffer.from(`key ${i} ${s.id}`).toString("base64")}`,
            ),
            signers: [...s.signers, { kind: "configured-hmac" as const, index }],
            offsetSeconds: 0,
            mutation: "none" as const,
          };
          const outcome = await expectSameOutcome(configOf(good), NOW_MS, deliveryOf(good));
          expect(outcome).toEqual({ accepted: { id: s.id, timestampSeconds: NOW_SECONDS } });
        },
      ),
      { numRuns: 200 },
    );
  });

  it("accepts a v1a signature by a configured public key, refuses one by another key", async () => {
    const [mine, other] = ED25519_PAIRS as [(typeof ED25519_PAIRS)[number], (typeof ED25519_PAIRS)[number]];
    const body = new TextEncoder().encode('{"jobId":"j","state":"running"}');
    const timestamp = String(NOW_SECONDS);
    const content = standardContent("msg_1", timestamp, body);
    const headers = (signature: string) => ({
      body,
      headers: { "webhook-id": "msg_1", "webhook-timestamp": timestamp, "webhook-signature": signature },
    });
    const config = { secrets: [mine.secret] };
    expect(
      await expectSameOutcome(config, NOW_MS, headers(ed25519Signature(mine.privateKey, content))),
    ).toEqual({
      accepted: { id: "msg_1", timestampSeconds: NOW_SECONDS },
    });
    expect(
      reasonOf(await expectSameOutcome(config, NOW_MS, headers(ed25519Signature(other.privateKey, content)))),
    ).toBe("no-matching-signature");
  });

  it.each([
    ["stale", -301, "timestamp-too-old"],
    ["future", 301, "timestamp-too-new"],
    ["just inside", 300, "accepted"],
  ])("a %s timestamp: %s", async (_name, offset, expected) => {
    const s: Scenario = {
      hmacSecrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
      publicKeys: [],
      signers: [{ kind: "configured-hmac", index: 0 }],
      id: "msg_t",
      body: Uint8Array.of(1, 2, 3),
      toleranceSeconds: undefined,
      offsetSeconds: offset,
      mutation: "none",
    };
    expect(reasonOf(await expectSameOutcome(configOf(s), NOW_MS, deliveryOf(s)))).toBe(expected);
  });

  it("refuses everything alike when no secret is configured", async () => {
    const delivery = { body: Uint8Array.of(), headers: {} };
    for (const config of [undefined, { secrets: [] }]) {
      expect(await expectSameOutcome(config, NOW_MS, delivery)).toEqual({
        refused: {
          code: "signature-invalid",
          reason: "no-matching-signature",
          message: 'provider "p" has no webhook secret configured',
          details: { reason: "no-matching-signature", provider: "p" },
        },
      });
    }
  });

  it("refuses a bad secret alike, when the verifier is made", async () => {
    for (const secret of ["whsec_", "whsec_====", "whpk_AAAA"]) {
      const outcome = await expectSameOutcome({ secrets: [secret] }, NOW_MS, {
        body: Uint8Array.of(),
        headers: {},
      });
      expect(outcome).toMatchObject({ refused: { code: "invalid-config" } });
    }
  });
});
