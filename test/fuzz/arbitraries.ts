import fc from "fast-check";

/**
 * Hostile input for the webhook endpoint, the API and the parsers: JSON that is almost right,
 * prototype-pollution keys, deep nesting, huge and odd numbers, invalid UTF-8 and other
 * encodings, and sizes around the body limit.
 */

const STATES = [
  "pending",
  "running",
  "succeeded",
  "failed",
  "cancelled",
  "expired",
  "lost",
  "bogus",
  "",
  "SUCCEEDED",
];
const POLLUTERS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf"];

export const hugeNumber = fc.oneof(
  fc.constantFrom(
    "1e400",
    "-1e400",
    "123456789012345678901234567890",
    "9007199254740993",
    "-0",
    "0.0000000000000000000001",
    "1E+308",
    "NaN",
    "Infinity",
  ),
  fc.double().map(String),
  fc.bigInt().map(String),
);

const field = fc.oneof(
  fc.string({ maxLength: 20 }).map((s) => JSON.stringify(s)),
  hugeNumber,
  fc.constantFrom("null", "true", "false", "[]", "{}", '"\\u0000"', '"\\ud800"', '"\\u202e"'),
  fc.constantFrom(...STATES).map((s) => JSON.stringify(s)),
);

/** An object with the webhook's keys, some of them replaced by pollution keys or odd values. */
export const webhookLikeJson = fc
  .record({
    jobId: fc.oneof(fc.constantFrom('"j1"', '"j2"', '"a/b"'), field),
    state: fc.oneof(
      fc.constantFrom(...STATES).map((s) => JSON.stringify(s)),
      field,
    ),
    seq: fc.oneof(hugeNumber, field),
    updateTime: fc.oneof(
      fc.constantFrom(
        '"2026-01-01T00:00:00Z"',
        '"2026-13-45T99:99:99Z"',
        '"0000-01-01T00:00:00Z"',
        // At and just beyond the timestamp bounds (core/bounds.ts).
        '"2000-01-01T00:00:00Z"',
        '"1999-12-31T23:59:59.999Z"',
        '"2200-12-31T23:59:59.999Z"',
        '"2201-01-01T00:00:00Z"',
        '"9999-12-31T23:59:59Z"',
      ),
      field,
    ),
    polluter: fc.constantFrom(...POLLUTERS),
    pollution: fc.oneof(field, fc.constant('{"state":"succeeded","polluted":true}')),
    order: fc.nat(3),
  })
  .map((r) => {
    const parts = [
      `"jobId":${r.jobId}`,
      `"state":${r.state}`,
      `"seq":${r.seq}`,
      `"updateTime":${r.updateTime}`,
    ];
    parts.splice(r.order, 0, `${JSON.stringify(r.polluter)}:${r.pollution}`);
    return `{${parts.join(",")}}`;
  });

/**
 * Nesting deep enough to matter for a recursive parser or a recursive size measure. Signed
 * bodies may go as deep as the caller asks (deep ones are refused, see regressions.test.ts).
 */
export const deepNesting = (maxDepth = 200_000) =>
  fc
    .record({
      depth: fc.integer({ min: 100, max: maxDepth }),
      kind: fc.constantFrom("array", "object", "result"),
    })
    .map(({ depth, kind }) => {
      if (kind === "array") return "[".repeat(depth) + "]".repeat(depth);
      if (kind === "object") return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
      return `{"jobId":"deep","state":"running","result":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    });

/** Bytes that are not valid UTF-8, or valid in another encoding only. */
export const badEncoding = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 300 }),
  fc.constantFrom(
    Uint8Array.from([0xc3, 0x28]),
    Uint8Array.from([0xed, 0xa0, 0x80]),
    Uint8Array.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
    Uint8Array.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
    Uint8Array.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
  ),
  webhookLikeJson.map((text) => {
    const bytes = new TextEncoder().encode(text);
    bytes[Math.floor(bytes.length / 2)] = 0xff;
    return bytes;
  }),
  webhookLikeJson.map((text) => new Uint8Array(Buffer.from(text, "utf16le"))),
);

/** Sizes around a body limit: just under, at, and over it. */
export const sizedBody = (limit: number) =>
  fc.integer({ min: -64, max: 64 }).map((delta) => {
    const padding = "x".repeat(Math.max(0, limit + delta - 60));
    return `{"jobId":"big","state":"running","result":"${padding}"}`;
  });

/** Any of the above, as the bytes of a request body. */
export const hostileBody = (limit: number, maxDepth?: number) =>
  fc.oneof(
    webhookLikeJson.map((t) => new TextEncoder().encode(t)),
    deepNesting(maxDepth).map((t) => new TextEncoder().encode(t)),
    badEncoding,
    sizedBody(limit).map((t) => new TextEncoder().encode(t)),
    fc.json().map((t) => new TextEncoder().encode(t)),
    fc.string({ unit: "binary", maxLength: 200 }).map((t) => new TextEncoder().encode(t)),
  );

/** One change to a correctly signed request, each of which must make it unsigned. */
export const MUTATIONS = [
  "flip-body-byte",
  "append-body",
  "truncate-body",
  "other-id",
  "other-timestamp",
  "drop-signature",
  "drop-id",
  "drop-timestamp",
  "corrupt-signature",
  "old-timestamp",
  "future-timestamp",
  "signature-of-other-body",
] as const;
export type Mutation = (typeof MUTATIONS)[number];

export function assertPrototypesClean(): void {
  for (const probe of [{}, Object.prototype, Object.create(null) ?? {}] as Record<string, unknown>[]) {
    for (const key of ["state", "polluted", "jobId", "seq"])
      if (key in probe && !Object.hasOwn(probe, key))
        throw new Error(`Object.prototype was polluted with "${key}"`);
  }
  if (Object.hasOwn(Object.prototype, "polluted") || Object.hasOwn(Object.prototype, "state"))
    throw new Error("Object.prototype was polluted");
}

/**
 * The JSON text of a result or error as a provider, a caller or a worker may send it: from a few
 * bytes to several MB, nested up to 20,000 levels (JSON.stringify fails past ~4,000), with NUL
 * bytes and lone surrogates (which jsonb cannot hold). Text, so that what JSON.stringify cannot
 * write can still be sent.
 */
export const outcomeValueText = fc.oneof(
  fc
    .record({
      bytes: fc.constantFrom(8, 1_000, 500_000, 524_200, 524_400, 700_000, 2_000_000, 3_500_000),
      char: fc.constantFrom("x", "\\u0000", "é", "\\ud800"),
    })
    .map(({ bytes, char }) => `"${char.repeat(Math.ceil(bytes / new TextEncoder().encode(char).length))}"`),
  fc.integer({ min: 1, max: 20_000 }).map((depth) => `${"[".repeat(depth)}${"]".repeat(depth)}`),
  fc.integer({ min: 60, max: 70 }).map((depth) => `${'{"a":'.repeat(depth)}"\\u0000"${"}".repeat(depth)}`),
  fc.constantFrom('{"\\u0000":"\\u0000"}', '"\\udc00x"', '{"message":"fine"}', "null", "[]", "0"),
  fc.json({ maxDepth: 3 }),
);

/** Epoch milliseconds at, inside and beyond the timestamp bounds (2000 to 2200), and past Date's range. */
export const boundaryMillis = (bounds: { minMs: number; maxMs: number }) =>
  fc.oneof(
    fc.constantFrom(
      bounds.minMs - 1,
      bounds.minMs,
      bounds.maxMs,
      bounds.maxMs + 1,
      0,
      8.64e15,
      8.64e15 + 1,
      1e20,
      1e300,
    ),
    fc.integer({ min: bounds.minMs, max: bounds.maxMs }),
    fc.double({ min: bounds.maxMs, max: 1e308, noNaN: true }),
    fc.integer({ min: 0, max: bounds.minMs }),
  );

/** RFC 3339 text for a drawn time; one Date cannot write (or not with 4 digits) as the year 9999 or 0001. */
export function rfc3339Of(ms: number): string {
  if (ms > Date.UTC(9999, 11, 31)) return "9999-12-31T23:59:59Z";
  if (ms < 0) return "0001-01-01T00:00:00Z";
  return new Date(ms).toISOString();
}
