import { describe, expect, it } from "vitest";
import { MIN_BUCKETS, StackedBars, shownWindow } from "../../src/dashboard/charts.js";
import type { TimeSeries, TimeWindow } from "../../src/store/overview-reads.js";

const MINUTE = 60_000;
const NOW = Date.UTC(2026, 0, 1, 12, 0);
const HOUR: TimeWindow = { from: NOW - 60 * MINUTE, to: NOW, bucketMs: MINUTE, cap: 10_000 };
const KEYS = [{ key: "webhook", label: "webhook", colour: "#00f" }] as const;

/** The x and width of every bar the chart draws. */
function bars(series: TimeSeries): { x: number; width: number }[] {
  const svg = String(StackedBars({ name: "t", title: "t", series, window: HOUR, keys: KEYS }));
  return [...svg.matchAll(/<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"/g)].map((m) => ({
    x: Number(m[1]),
    width: Number(m[2]),
  }));
}

const at = (minutesAgo: number, count = 1) => ({ start: NOW - minutesAgo * MINUTE, key: "webhook", count });

describe("charts on a short history", () => {
  it("a history of two minutes gets ten wide bars' room, not the last sliver of an hour", () => {
    const series = { buckets: [at(2, 3), at(1, 5)], complete: true };
    expect(shownWindow(series, HOUR).from).toBe(NOW - MIN_BUCKETS * MINUTE);
    const drawn = bars(series);
    expect(drawn).toHaveLength(2);
    // 596 px of plot over ten buckets: each bar is about 58 px wide (over sixty buckets, 8 px).
    for (const bar of drawn) expect(bar.width).toBeGreaterThan(50);
    const svg = String(StackedBars({ name: "t", title: "t", series, window: HOUR, keys: KEYS }));
    expect(svg).toContain("−10 min");
  });

  it("a full hour of history is drawn over the whole hour", () => {
    const series = { buckets: [at(60), at(30), at(1)], complete: true };
    expect(shownWindow(series, HOUR).from).toBe(HOUR.from);
    expect(bars(series)[0]?.width).toBeLessThan(10);
  });

  it("a history that began 25 minutes ago starts the chart there", () => {
    const series = { buckets: [at(25), at(3)], complete: true };
    expect(shownWindow(series, HOUR).from).toBe(NOW - 25 * MINUTE);
    expect(bars(series)[0]?.x).toBe(40);
  });

  it("no history at all keeps the last ten minutes", () => {
    expect(shownWindow({ buckets: [], complete: true }, HOUR).from).toBe(NOW - MIN_BUCKETS * MINUTE);
  });
});
