import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hmacDigest } from "./helpers/keys.js";
import { expectSameOutcome, reasonOf } from "./helpers/outcome.js";

// Stripe's scheme (`t=<seconds>,v1=<hex>,...`): WebCrypto and node:crypto must agree.

const NOW_MS = 1_767_225_600_500;
const NOW_SECONDS = Math.floor(NOW_MS / 1000);
const secret = fc.oneof(
  fc.string({ minLength: 1, maxLength: 24, unit: "grapheme" }),
  fc.base64String({ minLength: 4, maxLength: 32 }).map((text) => `whsec_${text}`),
);

/**
 * Anything but a `t` field: a second `t` replaces the first (as in Stripe's own SDKs), so junk that
 * names one (`t`, ` t=x`) makes even a well-signed delivery bad, which the acceptance case must not
 * generate. Both verifiers refusing such a header is checked below.
 */
const namesTimestamp = (text: string) => text.split(",").some((part) => part.trim().split("=")[0] === "t");
const junkText = fc.string({ maxLength: 70 }).filter((text) => !namesTimestamp(text));

const entry = fc.oneof(
  fc.record({ kind: fc.constant("configured" as const), index: fc.nat() }),
  fc.record({ kind: fc.constant("foreign" as const), secret }),
  fc.record({ kind: fc.constant("v0" as const), index: fc.nat() }),
  fc.record({ kind: fc.constant("junk" as const), text: junkText }),
);

const mutation = fc.constantFrom(
  "none",
  "tampered-body",
  "tampered-signature",
  "missing-header",
  "no-timestamp",
  "bad-timestamp",
  "leading-zero-timestamp",
  "upper-case",
  "spaces",
);

const scenario = fc.record({
  secrets: fc.array(secret, { minLength: 1, maxLength: 3 }),
  entries: fc.array(entry, { minLength: 1, maxLength: 4 }),
  header: fc.constantFrom(undefined, "x-stripe-signature"),
  toleranceSeconds: fc.constantFrom(undefined, 1, 300),
  offsetSeconds: fc.oneof(fc.integer({ min: -400, max: 400 }), fc.integer({ min: -1e9, max: 1e9 })),
  idHeader: fc.constantFrom(undefined, "x-delivery"),
  sentId: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
  body: fc.uint8Array({ maxLength: 300 }),
  mutation,
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function deliveryOf(s: Scenario) {
  let timestamp = String(NOW_SECONDS + s.offsetSeconds);
  if (s.mutation === "leading-zero-timestamp") timestamp = `00${timestamp}`;
  const content = Buffer.concat([Buffer.from(`${timestamp}.`), s.body]);
  const parts = s.entries.map((e) => {
    const pick = (index: number) => s.secrets[index % s.secrets.length] as string;
    if (e.kind === "configured") return `v1=${hmacDigest(pick(e.index), content, "hex")}`;
    if (e.kind === "foreign") return `v1=${hmacDigest(e.secret, content, "hex")}`;
    if (e.kind === "v0") return `v0=${hmacDigest(pick(e.index), content, "hex")}`;
    return e.text;
  });
  let signatures = parts;
  if (s.mutation === "tampered-signature")
    signatures = parts.map((p) => p.replace(/[0-9a-f](?=[0-9a-f]{5}$)/, (c) => (c === "0" ? "1" : "0")));
  if (s.mutation === "upper-case") signatures = parts.map((p) => p.toUpperCase().replace(/^V1=/, "v1="));
  const fields = [
    ...(s.mutation === "no-timestamp"
      ? []
      : [`t=${s.mutation === "bad-timestamp" ? `${timestamp}x` : timestamp}`]),
    ...signatures,
  ];
  const headerName = s.header ?? "stripe-signature";
  const headers: Record<string, string> = {};
  headers[headerName] = fields.join(s.mutation === "spaces" ? " , " : ",");
  if (s.mutation === "missing-header") delete headers[headerName];
  if (s.idHeader !== undefined && s.sentId !== undefined) headers[s.idHeader] = s.sentId;
  let body = s.body;
  if (s.mutation === "tampered-body") body = Uint8Array.from([...body, 10]);
  return { body, headers };
}

const configOf = (s: Scenario) => ({
  scheme: "stripe" as const,
  secrets: s.secrets,
  header: s.header,
  toleranceSeconds: s.toleranceSeconds,
  idHeader: s.idHeader,
});

describe("Stripe scheme: WebCrypto and node:crypto agree", () => {
  it("on generated deliveries: rotation, several v1, v0 ignored, stale or future, tampering, missing header", async () => {
    const seen = new Set<unknown>();
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        seen.add(reasonOf(await expectSameOutcome(configOf(s), NOW_MS, deliveryOf(s))));
      }),
      { numRuns: 600 },
    );
    expect([...seen].sort()).toEqual([
      "accepted",
      "bad-timestamp",
      "missing-headers",
      "no-matching-signature",
      "timestamp-too-new",
      "timestamp-too-old",
    ]);
  });

  it("accepts a fresh delivery signed with any configured secret", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.nat(), async (s, index) => {
        const good = {
          ...s,
          entries: [...s.entries, { kind: "configured" as const, index }],
          offsetSeconds: 0,
          mutation: "none" as const,
        };
        const outcome = await expectSameOutcome(configOf(good), NOW_MS, deliveryOf(good));
        expect(outcome).toMatchObject({ accepted: { timestampSeconds: NOW_SECONDS } });
      }),
      { numRuns: 200 },
    );
  });

  it("refuses a header whose later field names the timestamp again (a bare `t` included)", async () => {
    for (const junk of ["t", " t=", "t=abc"]) {
      const s: Scenario = {
        secrets: ["whsec_one"],
        entries: [
          { kind: "junk", text: junk },
          { kind: "configured", index: 0 },
        ],
        header: undefined,
        toleranceSeconds: undefined,
        offsetSeconds: 0,
        idHeader: undefined,
        sentId: undefined,
        body: Uint8Array.from([1, 2, 3]),
        mutation: "none",
      };
      expect(reasonOf(await expectSameOutcome(configOf(s), NOW_MS, deliveryOf(s)))).toBe("bad-timestamp");
    }
  });
});
