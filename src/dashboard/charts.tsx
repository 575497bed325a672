import type { TimeSeries, TimeWindow } from "../store/overview-reads.js";
import { formatNumber } from "./format.js";

export interface SeriesKey {
  key: string;
  label: string;
  colour: string;
}

const OTHER: SeriesKey = { key: "other", label: "other", colour: "#a0aec0" };
const WIDTH = 640;
const HEIGHT = 170;
const LEFT = 40;
const BOTTOM = 22;
const TOP = 8;
/** The fewest buckets a chart shows: a history shorter than this is not drawn as one sliver at the right. */
export const MIN_BUCKETS = 10;

/**
 * The part of the window the chart draws: from the first bucket that holds data (at least
 * MIN_BUCKETS before the end), so a service that started two minutes ago gets ten readable bars
 * instead of sixty slots with everything squashed into the last one.
 */
export function shownWindow(series: TimeSeries, window: TimeWindow): TimeWindow {
  const bucketCount = Math.max(1, Math.round((window.to - window.from) / window.bucketMs));
  const first = Math.min(
    bucketCount,
    ...series.buckets.map((bucket) =>
      Math.max(0, Math.floor((bucket.start - window.from) / window.bucketMs)),
    ),
  );
  const skipped = Math.max(0, Math.min(first, bucketCount - MIN_BUCKETS));
  return { ...window, from: window.from + skipped * window.bucketMs };
}

/** Per-key totals over the window; keys not listed fall under "other". */
export function totalsByKey(series: TimeSeries, keys: readonly SeriesKey[]): Map<string, number> {
  const known = new Set(keys.map((k) => k.key));
  const totals = new Map<string, number>();
  for (const bucket of series.buckets) {
    const key = known.has(bucket.key) ? bucket.key : OTHER.key;
    totals.set(key, (totals.get(key) ?? 0) + bucket.count);
  }
  return totals;
}

/**
 * A stacked bar per bucket of the window, as plain SVG (no script, no library): each segment
 * carries a <title>, so hovering a bar tells the minute and the counts.
 */
export function StackedBars(props: {
  name: string;
  title: string;
  series: TimeSeries;
  window: TimeWindow;
  keys: readonly SeriesKey[];
}) {
  const { series } = props;
  const window = shownWindow(series, props.window);
  const keys = [...props.keys, OTHER];
  const known = new Set(props.keys.map((k) => k.key));
  const bucketCount = Math.max(1, Math.round((window.to - window.from) / window.bucketMs));
  const stacks = Array.from({ length: bucketCount }, () => new Map<string, number>());
  for (const bucket of series.buckets) {
    const index = Math.floor((bucket.start - window.from) / window.bucketMs);
    const stack = stacks[index];
    if (!stack) continue;
    const key = known.has(bucket.key) ? bucket.key : OTHER.key;
    stack.set(key, (stack.get(key) ?? 0) + bucket.count);
  }
  const max = Math.max(1, ...stacks.map((s) => [...s.values()].reduce((a, b) => a + b, 0)));
  const plotWidth = WIDTH - LEFT - 4;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / bucketCount;
  const barWidth = Math.max(1, slot - 1.5);
  const y = (value: number) => (value / max) * plotHeight;
  const totals = totalsByKey(series, props.keys);
  const minutes = Math.round((window.to - window.from) / 60_000);

  return (
    <figure class="chart" data-chart={props.name}>
      <svg class="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={props.title}>
        <title>{props.title}</title>
        <line x1={LEFT} y1={TOP + plotHeight} x2={WIDTH - 4} y2={TOP + plotHeight} stroke="#c5ccd8" />
        <text x={LEFT - 6} y={TOP + 10} text-anchor="end" font-size="11" fill="#5f6b7a">
          {formatNumber(max)}
        </text>
        <text x={LEFT - 6} y={TOP + plotHeight} text-anchor="end" font-size="11" fill="#5f6b7a">
          0
        </text>
        {stacks.map((stack, index) => {
          let base = TOP + plotHeight;
          const x = LEFT + index * slot;
          const minute = new Date(window.from + index * window.bucketMs).toISOString().slice(11, 16);
          return keys.map((key) => {
            const count = stack.get(key.key) ?? 0;
            if (count === 0) return null;
            const height = y(count);
            base -= height;
            return (
              <rect x={x} y={base} width={barWidth} height={Math.max(height, 0.5)} fill={key.colour}>
                <title>{`${minute} UTC · ${key.label}: ${formatNumber(count)}`}</title>
              </rect>
            );
          });
        })}
        <text x={LEFT} y={HEIGHT - 6} font-size="11" fill="#5f6b7a">
          {`−${minutes} min`}
        </text>
        <text x={LEFT + plotWidth / 2} y={HEIGHT - 6} text-anchor="middle" font-size="11" fill="#5f6b7a">
          {`−${Math.round(minutes / 2)} min`}
        </text>
        <text x={WIDTH - 4} y={HEIGHT - 6} text-anchor="end" font-size="11" fill="#5f6b7a">
          now
        </text>
      </svg>
      <figcaption class="legend">
        {keys
          .filter((key) => key !== OTHER || (totals.get(OTHER.key) ?? 0) > 0)
          .map((key) => (
            <span data-series={key.key} data-total={totals.get(key.key) ?? 0}>
              <i style={`background:${key.colour}`} />
              {key.label} {formatNumber(totals.get(key.key) ?? 0)}
            </span>
          ))}
        {!series.complete && <span class="muted">(newest {formatNumber(props.window.cap)} only)</span>}
      </figcaption>
    </figure>
  );
}
