import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoOrNull, isoTime } from "../../src/core/iso-time.js";

// isoTime writes what `Date.prototype.toISOString` writes, by its own arithmetic for whole
// milliseconds from 1970 to 9999 and through `Date` for the rest: the same text for every number.
const toISOString = (ms: number) => new Date(ms).toISOString();

describe("isoTime", () => {
  it("writes the same text as toISOString for every whole millisecond from 1970 to 9999", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => {
        expect(isoTime(ms)).toBe(toISOString(ms));
      }),
      { numRuns: 20_000 },
    );
  });

  it("at the edges: the epoch, leap days, century years, the ends of days, months and years", () => {
    const at = (text: string) => Date.parse(text);
    const edges = [
      0,
      1,
      999,
      at("1970-12-31T23:59:59.999Z"),
      at("1972-02-29T12:00:00.000Z"),
      at("1999-12-31T23:59:59.999Z"),
      at("2000-02-29T00:00:00.000Z"),
      at("2000-03-01T00:00:00.000Z"),
      at("2024-02-29T23:59:59.999Z"),
      at("2100-02-28T23:59:59.999Z"),
      at("2100-03-01T00:00:00.000Z"),
      at("2400-02-29T00:00:00.000Z"),
      at("9999-12-31T23:59:59.999Z"),
    ];
    for (const ms of edges)
      for (const near of [ms - 1, ms, ms + 1]) expect(isoTime(near)).toBe(toISOString(near));
  });

  it("leaves what it does not write to Date: before 1970, after 9999, fractions; throws as Date does", () => {
    for (const ms of [
      -1, -62_198_755_200_000, 253_402_300_800_000, 8.64e15, -8.64e15, 1.5, 1_700_000_000_000.25,
    ])
      expect(isoTime(ms)).toBe(toISOString(ms));
    for (const ms of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1])
      expect(() => isoTime(ms)).toThrow(RangeError);
  });

  it("isoOrNull keeps null", () => {
    expect(isoOrNull(null)).toBeNull();
    expect(isoOrNull(1_765_000_000_123)).toBe(toISOString(1_765_000_000_123));
  });
});
