import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  boundJsonValue,
  boundObservation,
  isTruncated,
  storableDeliveryId,
  storableText,
} from "../../src/core/bounded-value.js";
import { isTimestampInBounds, TIMESTAMP_BOUNDS } from "../../src/core/bounds.js";
import { exceedsDepth, jsonSize, LIMITS } from "../../src/core/validation.js";

const deep = (depth: number): unknown => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);

describe("boundJsonValue", () => {
  it("keeps what is storable as it is (the same object), and gives a storable stand-in for the rest", () => {
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.integer({ min: 60, max: 70 }).map(deep),
      fc.integer({ min: 1, max: 3 }).map((n) => "\u0000".repeat(n * 50_000)),
      fc.integer({ min: 1, max: 3 }).map((n) => "\ud800".repeat(n * 50_000)),
      fc.integer({ min: 1, max: 3 }).map((n) => "é".repeat(n * 150_000)),
    );
    fc.assert(
      fc.property(value, (v) => {
        const kept = boundJsonValue(v);
        const size = jsonSize(v);
        const storable = size !== null && size <= LIMITS.resultBytes && !exceedsDepth(v, LIMITS.jsonDepth);
        if (storable) expect(kept).toBe(v);
        else expect(isTruncated(kept)).toBe(true);
        expect(jsonSize(kept) ?? 0).toBeLessThanOrEqual(LIMITS.resultBytes);
        expect(exceedsDepth(kept, LIMITS.jsonDepth)).toBe(false);
        expect(boundJsonValue(kept)).toBe(kept);
      }),
      { numRuns: 120 },
    );
  });

  it("a string of 100,000 NULs (600 KB of JSON, 100 KB of text) is cut: each is written as \\u0000", () => {
    expect(boundJsonValue("\u0000".repeat(100_000))).toMatchObject({ truncated: true, reason: "too-large" });
  });

  it("says why: too deep at 65 levels (64 is kept), not JSON for a cycle or a BigInt", () => {
    expect(boundJsonValue(deep(64))).toEqual(deep(64));
    expect(boundJsonValue(deep(65))).toMatchObject({ reason: "too-deep", limitDepth: LIMITS.jsonDepth });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(boundJsonValue(cyclic)).toMatchObject({ truncated: true });
    expect(boundJsonValue({ n: 1n })).toMatchObject({ reason: "not-json" });
  });
});

describe("boundObservation", () => {
  it("holds an unknown state name and a raw state to the text limits, and leaves a canonical one alone", () => {
    const obs = boundObservation({
      provider: "p",
      id: "j",
      state: `odd\u0000${"s".repeat(500)}`,
      rawState: "a\ud800b",
      source: "reconcile",
    });
    expect(obs.state.length).toBe(LIMITS.stateLength);
    expect(obs.state.startsWith("odd\ufffd")).toBe(true);
    expect(obs.rawState).toBe("a\ufffdb");
    const plain = { provider: "p", id: "j", state: "running", source: "webhook" as const };
    expect(boundObservation(plain)).toBe(plain);
  });
});

describe("storableDeliveryId and storableText", () => {
  it("keeps a short id; hashes a long one or one with a control character, stably", () => {
    expect(storableDeliveryId("msg_1")).toBe("msg_1");
    const long = "x".repeat(LIMITS.deliveryIdLength + 1);
    expect(storableDeliveryId(long)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(storableDeliveryId(long)).toBe(storableDeliveryId(long));
    expect(storableDeliveryId("a\u0000b")).toMatch(/^sha256:/);
    expect(storableDeliveryId("a\u009fb")).toMatch(/^sha256:/);
  });

  it("hashes an id with half of a surrogate pair, keeps one with a whole pair", () => {
    expect(storableDeliveryId("a\ud800")).toMatch(/^sha256:/);
    expect(storableDeliveryId("\udc00b")).toMatch(/^sha256:/);
    expect(storableDeliveryId("a\udc00\ud800b")).toMatch(/^sha256:/);
    expect(storableDeliveryId("msg_😀")).toBe("msg_😀");
  });

  it("never cuts between the halves of a surrogate pair", () => {
    const text = `${"a".repeat(126)}😀😀`;
    const cut = storableText(text, 128);
    expect(cut.length).toBeLessThanOrEqual(128);
    expect(cut).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});

describe("timestamp bounds", () => {
  it("are the years 2000 to 2200, both ends included", () => {
    expect(new Date(TIMESTAMP_BOUNDS.minMs).toISOString()).toBe("2000-01-01T00:00:00.000Z");
    expect(new Date(TIMESTAMP_BOUNDS.maxMs).toISOString()).toBe("2200-12-31T23:59:59.999Z");
    expect(isTimestampInBounds(TIMESTAMP_BOUNDS.minMs)).toBe(true);
    expect(isTimestampInBounds(TIMESTAMP_BOUNDS.maxMs)).toBe(true);
    for (const outside of [
      TIMESTAMP_BOUNDS.minMs - 1,
      TIMESTAMP_BOUNDS.maxMs + 0.001,
      Number.NaN,
      Infinity,
      1e300,
    ])
      expect(isTimestampInBounds(outside)).toBe(false);
  });
});
