import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { TIMESTAMP_BOUNDS } from "../../src/core/bounds.js";
import { manualClock } from "../../src/core/clock.js";
import { DEFAULT_MAX_CLOCK_SKEW_MS, orderingTimeOf } from "../../src/core/ordering-time.js";
import type { ObservationInput } from "../../src/core/validation.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { Finality, FinalityOptions } from "../../src/engine/finality.js";
import { ledgerOptionsFromConfig } from "../../src/host/from-config.js";
import { engineOf } from "../helpers/engine.js";

// Issue 33, defects 6 and 7: a timestamp is an ordering hint, never a gate. A time out of range
// never keeps a state from applying, and a time far ahead of its receipt never wins the order of
// same-rank updates (`ingest.maxClockSkewSeconds`).

const NOW = Date.UTC(2026, 0, 1);
const MIN = 60_000;
const Y2199 = Date.UTC(2199, 0, 1);
const key = { provider: "acme", id: "job-1" };
const opened: Finality[] = [];
afterEach(async () => {
  for (const finality of opened.splice(0)) await finality.close();
});

function ledger(options: Partial<FinalityOptions> = {}) {
  const clock = manualClock(NOW);
  const finality = createFinality({
    store: { sqlite: ":memory:" },
    providers: { acme: {} },
    clock,
    ...options,
  });
  opened.push(finality);
  return { finality, clock };
}

const running = (updateTime: number, deliveryId: string): ObservationInput => ({
  ...key,
  state: "running",
  source: "webhook",
  deliveryId,
  updateTime,
  result: { progress: deliveryId },
});

describe("orderingTimeOf", () => {
  const skew = DEFAULT_MAX_CLOCK_SKEW_MS;
  it.each([
    ["no time", undefined, { updateTime: undefined, adjusted: null }],
    ["a time just now", NOW - 1000, { updateTime: NOW - 1000, adjusted: null }],
    ["a time within the skew", NOW + skew, { updateTime: NOW + skew, adjusted: null }],
    [
      "a time just past the skew",
      NOW + skew + 1,
      { updateTime: NOW, adjusted: { given: NOW + skew + 1, reason: "ahead-of-receipt", used: NOW } },
    ],
    ["2199", Y2199, { updateTime: NOW, adjusted: { given: Y2199, reason: "ahead-of-receipt", used: NOW } }],
    [
      "past 2200",
      TIMESTAMP_BOUNDS.maxMs + 1,
      { updateTime: NOW, adjusted: { given: TIMESTAMP_BOUNDS.maxMs + 1, reason: "after-range", used: NOW } },
    ],
    [
      "1971",
      Date.UTC(1971, 0, 1),
      { updateTime: undefined, adjusted: { given: Date.UTC(1971, 0, 1), reason: "before-range" } },
    ],
    ["zero", 0, { updateTime: undefined, adjusted: { given: 0, reason: "before-range" } }],
    ["NaN", Number.NaN, { updateTime: undefined, adjusted: { given: "NaN", reason: "not-a-time" } }],
    [
      "Infinity",
      Number.POSITIVE_INFINITY,
      { updateTime: undefined, adjusted: { given: "Infinity", reason: "not-a-time" } },
    ],
  ])("%s", (_name, given, expected) => {
    expect(orderingTimeOf(given, NOW, skew)).toEqual(expected);
  });

  it("a skew of 0 lets no time ahead of the receipt order", () => {
    expect(orderingTimeOf(NOW + 1, NOW, 0)).toMatchObject({ updateTime: NOW });
    expect(orderingTimeOf(NOW, NOW, 0)).toEqual({ updateTime: NOW, adjusted: null });
  });
});

describe("one skewed clock no longer freezes a job's progress (defect 7)", () => {
  it("a same-rank update dated 2199 is applied at its receipt time, and later updates still apply", async () => {
    const { finality, clock } = ledger();
    expect(await finality.ingest(running(NOW - MIN, "d-1"))).toMatchObject({ applied: true });
    clock.advance(MIN);
    expect(await finality.ingest(running(Y2199, "d-2"))).toMatchObject({ applied: true });
    expect(await finality.getJob(key)).toMatchObject({ maxUpdateTime: NOW + MIN });
    clock.advance(MIN);
    // The sane clock's next update: newer than the receipt of the skewed one, so it applies.
    expect(await finality.ingest(running(NOW + 2 * MIN, "d-3"))).toMatchObject({ applied: true });
    expect(await finality.getJob(key)).toMatchObject({
      result: { progress: "d-3" },
      maxUpdateTime: NOW + 2 * MIN,
    });
    const events = await finality.jobEvents(key);
    expect(events[1]?.detail).toMatchObject({
      updateTime: NOW + MIN,
      timeAdjusted: { given: Y2199, reason: "ahead-of-receipt", used: NOW + MIN },
    });
    expect(events[2]?.detail).not.toHaveProperty("timeAdjusted");
  });

  it("maxClockSkewSeconds sets how far ahead a time may be and still order", async () => {
    const { finality } = ledger({ maxClockSkewSeconds: 3600 });
    await finality.ingest(running(NOW + 30 * MIN, "d-1"));
    expect(await finality.getJob(key)).toMatchObject({ maxUpdateTime: NOW + 30 * MIN });
    await finality.ingest(running(NOW + 90 * MIN, "d-2"));
    expect(await finality.getJob(key)).toMatchObject({
      maxUpdateTime: NOW + 30 * MIN,
      result: { progress: "d-1" },
    });
  });

  it("a negative skew is refused", () => {
    expect(() => ledger({ maxClockSkewSeconds: -1 })).toThrow(/maxClockSkewSeconds/);
  });
});

describe("a time out of range never keeps a state from applying (defect 6)", () => {
  it.each([
    ["1971", Date.UTC(1971, 0, 1), "before-range"],
    ["NaN", Number.NaN, "not-a-time"],
    ["past Date's range", 1e300, "after-range"],
  ])(
    "a terminal state dated %s settles the job, orders by no time, and says why",
    async (_n, time, reason) => {
      const { finality } = ledger();
      await finality.register(key);
      const outcome = await engineOf(finality).ingestTrusted({
        ...key,
        state: "expired",
        source: "reconcile",
        updateTime: time,
      });
      expect(outcome).toMatchObject({ applied: true, settled: true, job: { state: "expired" } });
      const job = await finality.getJob(key);
      expect(job).toMatchObject({ state: "expired" });
      expect((job?.maxUpdateTime ?? NOW) <= NOW).toBe(true);
      const events = await finality.jobEvents(key);
      expect(events.at(-1)?.detail).toMatchObject({ timeAdjusted: { reason } });
    },
  );
});

describe("ingest.maxClockSkewSeconds", () => {
  it("reaches the ledger from the file and from FINALITY_MAX_CLOCK_SKEW_SECONDS", async () => {
    const file = { providers: { acme: { type: "generic" } }, ingest: { maxClockSkewSeconds: 600 } };
    expect(parseConfig(file, {}).ingest.maxClockSkewSeconds).toBe(600);
    expect(parseConfig({}, {}).ingest.maxClockSkewSeconds).toBe(DEFAULT_MAX_CLOCK_SKEW_MS / 1000);
    const config = parseConfig(file, { FINALITY_MAX_CLOCK_SKEW_SECONDS: "60" });
    expect(config.ingest.maxClockSkewSeconds).toBe(60);
    const { finality } = ledger(ledgerOptionsFromConfig(config));
    await finality.ingest(running(NOW + 2 * MIN, "d-1"));
    expect(await finality.getJob(key)).toMatchObject({ maxUpdateTime: NOW });
  });

  it("refuses a value out of range, naming the key", () => {
    for (const value of [-1, 86_401]) {
      expect(() => parseConfig({ ingest: { maxClockSkewSeconds: value } }, {})).toThrow(
        /ingest\.maxClockSkewSeconds/,
      );
    }
    expect(() => parseConfig({}, { FINALITY_MAX_CLOCK_SKEW_SECONDS: "soon" })).toThrow(
      /FINALITY_MAX_CLOCK_SKEW_SECONDS/,
    );
  });
});
