import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toTime } from "../../src/store/postgres/postgres-values.js";
import { postgresSuite } from "../helpers/postgres.js";

// A time goes to PostgreSQL as ISO text where its year has four digits, as a Date (node-postgres
// writes it, with its " BC") elsewhere. Both must be read back as the same millisecond, whatever
// the year PostgreSQL's timestamptz holds (4713 BC to 294276 AD; Date's range ends sooner).
const { admin } = await postgresSuite("PostgreSQL: times sent as parameters");

const EARLIEST_TIMESTAMPTZ_MS = -210_866_803_200_000; // 4713-11-24 BC, 00:00 UTC
const LATEST_DATE_MS = 8_640_000_000_000_000;
const YEAR_1_MS = -62_135_596_800_000;
const YEAR_10000_MS = 253_402_300_800_000;

async function roundTrip(ms: number): Promise<number> {
  // Prepared, as the store's statements are: the parameter's type comes from its use.
  const [row] = await admin.unsafe<{ at: Date }>("SELECT $1::timestamptz AS at", [toTime(ms)], {
    prepare: true,
  });
  return (row as { at: Date }).at.getTime();
}

describe("times sent to PostgreSQL", () => {
  it("the edges of the four-digit years, and past them, come back as sent", async () => {
    for (const edge of [YEAR_1_MS, YEAR_10000_MS]) {
      for (const ms of [edge - 1, edge, edge + 1]) expect(await roundTrip(ms)).toBe(ms);
    }
    expect(typeof toTime(YEAR_1_MS)).toBe("string");
    expect(toTime(YEAR_1_MS - 1)).toBeInstanceOf(Date);
    expect(toTime(YEAR_10000_MS)).toBeInstanceOf(Date);
    expect(await roundTrip(0)).toBe(0);
    expect(await roundTrip(LATEST_DATE_MS)).toBe(LATEST_DATE_MS);
  });

  it("any millisecond timestamptz and Date both hold comes back as sent", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.integer({ min: EARLIEST_TIMESTAMPTZ_MS, max: LATEST_DATE_MS }),
          fc.integer({ min: YEAR_1_MS - 86_400_000, max: YEAR_1_MS + 86_400_000 }),
          fc.integer({ min: YEAR_10000_MS - 86_400_000, max: YEAR_10000_MS + 86_400_000 }),
          fc.integer({ min: 0, max: 4_102_444_800_000 }), // 1970–2100: every time in use
        ),
        async (ms) => {
          expect(await roundTrip(ms)).toBe(ms);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a time outside Date's range is a typed error, not the driver's RangeError", () => {
    expect(() => toTime(LATEST_DATE_MS + 1)).toThrow(/not a storable epoch-milliseconds value/);
  });
});
