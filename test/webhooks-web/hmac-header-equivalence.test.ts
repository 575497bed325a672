import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hmacDigest } from "./helpers/keys.js";
import { expectSameOutcome, reasonOf } from "./helpers/outcome.js";

// The `hmac-sha256` scheme (GitHub, Shopify, home-grown): WebCrypto and node:crypto must agree.

const NOW_MS = 1_767_225_600_999;
const secret = fc.string({ minLength: 1, maxLength: 24, unit: "grapheme" });

const mutation = fc.constantFrom(
  "none",
  "tampered-body",
  "tampered-signature",
  "missing-header",
  "blank-header",
  "no-prefix",
  "upper-case",
  "unpadded",
  "url-safe",
  "padded-with-spaces",
);

const scenario = fc.record({
  secrets: fc.array(secret, { minLength: 1, maxLength: 3 }),
  /** Which configured secret signs; past the end: a foreign one. */
  signerIndex: fc.nat({ max: 4 }),
  foreign: secret,
  encoding: fc.constantFrom("hex" as const, "base64" as const),
  prefix: fc.constantFrom("", "sha256=", "v1:"),
  idHeader: fc.constantFrom(undefined, "x-delivery"),
  sentId: fc.option(fc.string({ maxLength: 300 }), { nil: undefined }),
  body: fc.uint8Array({ maxLength: 300 }),
  mutation,
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

const HEADER = "x-signature-256";

function deliveryOf(s: Scenario) {
  const signer = s.secrets[s.signerIndex] ?? s.foreign;
  let digest = hmacDigest(signer, s.body, s.encoding);
  let body = s.body;
  if (s.mutation === "tampered-body")
    body = body.length === 0 ? Uint8Array.of(7) : body.map((b, i) => (i === 0 ? b ^ 0x80 : b));
  if (s.mutation === "tampered-signature")
    digest = `${digest.slice(0, 10)}${digest[10] === "0" ? "1" : "0"}${digest.slice(11)}`;
  if (s.mutation === "upper-case") digest = digest.toUpperCase();
  if (s.mutation === "unpadded") digest = digest.replace(/=+$/, "");
  if (s.mutation === "url-safe") digest = digest.replace(/\+/g, "-").replace(/\//g, "_");
  const headers: Record<string, string> = {};
  headers[HEADER] = s.mutation === "no-prefix" ? digest : `${s.prefix}${digest}`;
  if (s.mutation === "padded-with-spaces") headers[HEADER] = `  ${headers[HEADER]} `;
  if (s.mutation === "missing-header") delete headers[HEADER];
  if (s.mutation === "blank-header") headers[HEADER] = "   ";
  if (s.idHeader !== undefined && s.sentId !== undefined) headers[s.idHeader] = s.sentId;
  return { body, headers };
}

const configOf = (s: Scenario) => ({
  scheme: "hmac-sha256" as const,
  secrets: s.secrets,
  header: HEADER,
  encoding: s.encoding,
  prefix: s.prefix,
  idHeader: s.idHeader,
});

describe("HMAC header scheme: WebCrypto and node:crypto agree", () => {
  it("on generated deliveries: hex and base64, prefixes, rotation, tampering, missing header", async () => {
    const seen = new Set<unknown>();
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        seen.add(reasonOf(await expectSameOutcome(configOf(s), NOW_MS, deliveryOf(s))));
      }),
      { numRuns: 600 },
    );
    expect([...seen].sort()).toEqual(["accepted", "missing-headers", "no-matching-signature"]);
  });

  it("accepts a good delivery with the sender's id, else the body's hash", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const good = { ...s, signerIndex: s.signerIndex % s.secrets.length, mutation: "none" as const };
        const outcome = await expectSameOutcome(configOf(good), NOW_MS, deliveryOf(good));
        const sent = good.idHeader === undefined ? undefined : good.sentId?.trim();
        const id =
          sent && sent.length <= 256
            ? sent
            : `sha256:${createHash("sha256").update(good.body).digest("hex")}`;
        expect(outcome).toEqual({ accepted: { id, timestampSeconds: Math.floor(NOW_MS / 1000) } });
      }),
      { numRuns: 200 },
    );
  });

  it("uses the defaults alike: header x-signature, hex, no prefix", async () => {
    const body = Uint8Array.of(1, 2, 3);
    const headers = { "x-signature": hmacDigest("s3cret", body, "hex") };
    const outcome = await expectSameOutcome({ scheme: "hmac-sha256", secrets: ["s3cret"] }, NOW_MS, {
      body,
      headers,
    });
    expect(reasonOf(outcome)).toBe("accepted");
  });
});
