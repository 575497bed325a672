import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import { databaseClock, earliestDatabaseNow } from "../../src/store/postgres/postgres-clock.js";

describe("the database clock", () => {
  it("is this machine's clock plus the measured offset, in whole milliseconds", async () => {
    const local = manualClock(1_000_000);
    const clock = databaseClock(async () => local.now() - 60_000, local);
    expect(clock.offsetMs()).toBeNull();
    expect(clock.now()).toBe(1_000_000);
    await clock.sync();
    // Half the round trip (microseconds here, unless a GC pause comes in between) is all a
    // reading can be off by.
    const offset = clock.offsetMs() ?? Number.NaN;
    expect(Number.isInteger(offset) && Math.abs(offset + 60_000) <= 1).toBe(true);
    local.advance(5_000);
    expect(clock.now()).toBe(1_005_000 + offset);
  });

  it("keeps the last offset when the database cannot be read, and never throws", async () => {
    const local = manualClock(1_000_000);
    let reachable = true;
    let reads = 0;
    const clock = databaseClock(async () => {
      reads += 1;
      if (!reachable) throw new Error("connection refused");
      return local.now() + 2_000;
    }, local);
    await clock.sync();
    expect(clock.offsetMs()).toBe(2_000);
    reachable = false;
    reads = 0;
    await expect(clock.sync()).resolves.toBeUndefined();
    expect(clock.offsetMs()).toBe(2_000);
    // One failed reading ends the measurement: a database that does not answer costs one wait.
    expect(reads).toBe(1);
  });

  it("measures once for callers that ask at the same time", async () => {
    const local = manualClock(1_000_000);
    let reads = 0;
    const clock = databaseClock(async () => {
      reads += 1;
      return local.now();
    }, local);
    await Promise.all([clock.sync(), clock.sync(), clock.sync()]);
    // One measurement (its three readings), not three.
    expect(reads).toBe(3);
    await clock.sync();
    expect(reads).toBe(6);
  });

  it("knows its error, half the kept reading's round trip: the earliest the database's clock may read is the estimate less it", async () => {
    const local = manualClock(1_000_000);
    // Each reading's round trip lasts at least 40 ms of real time: the database answers late.
    const clock = databaseClock(async () => {
      await new Promise((resolve) => setTimeout(resolve, 40));
      return local.now() + 2_000;
    }, local);
    expect([clock.errorMs(), earliestDatabaseNow(clock)]).toEqual([null, null]);
    await clock.sync();
    const error = clock.errorMs() ?? Number.NaN;
    // 40 ms / 2 + 0.5 for the rounding, less 1 ms: a timer may fire up to a millisecond early
    // by performance.now(), which is what the round trip is measured with.
    expect(error).toBeGreaterThanOrEqual(20);
    expect(earliestDatabaseNow(clock)).toBe(clock.now() - error);
  });
});
