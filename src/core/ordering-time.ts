import { isTimestampInBounds, TIMESTAMP_BOUNDS } from "./bounds.js";

/** How far ahead of its receipt an observation's `updateTime` may be and still order it (5 min). */
export const DEFAULT_MAX_CLOCK_SKEW_MS = 300_000;

/** Why an observation's `updateTime` was not used as it came. */
type TimeAdjustmentReason =
  /** Not a finite number (NaN, ±Infinity): dropped. */
  | "not-a-time"
  /** Before 2000-01-01 (an epoch read as seconds, a zero, a 1971 `created_at`): dropped. */
  | "before-range"
  /** After the year 2200: cut to the receipt time. */
  | "after-range"
  /** Further ahead of the receipt time than the allowed clock skew: cut to the receipt time. */
  | "ahead-of-receipt";

export interface TimeAdjustment {
  /** The time as it came (a number, or its text when JSON cannot hold it). */
  given: number | string;
  reason: TimeAdjustmentReason;
  /** The time used instead; absent when the time was dropped. */
  used?: number;
}

interface OrderingTime {
  /** The time the reducer orders by; undefined when there is none to use. */
  updateTime: number | undefined;
  /** Set when `updateTime` is not the time that came. */
  adjusted: TimeAdjustment | null;
}

/**
 * The `updateTime` an observation is ordered by, received at `receivedAt`. A timestamp is an
 * ordering hint, never a gate: whatever it says, the state still goes through the reducer (a
 * higher rank applies whatever its time). What it may not do is poison the order: a time before
 * 2000 or not a number is dropped (it orders nothing), and a time further ahead of the receipt
 * than `maxSkewMs` (or past 2200) is cut to the receipt time. Kept as it came, one skewed clock's
 * 2199 became the job's ordering key, and every later same-rank update was `stale` for good.
 */
export function orderingTimeOf(
  updateTime: number | undefined,
  receivedAt: number,
  maxSkewMs: number,
): OrderingTime {
  if (updateTime === undefined) return { updateTime: undefined, adjusted: null };
  if (!Number.isFinite(updateTime))
    return { updateTime: undefined, adjusted: { given: String(updateTime), reason: "not-a-time" } };
  if (updateTime < TIMESTAMP_BOUNDS.minMs)
    return { updateTime: undefined, adjusted: { given: updateTime, reason: "before-range" } };
  // A ledger clock outside the bounds (a test's clock at 0) gives no receipt time to compare to.
  const ahead = isTimestampInBounds(receivedAt) ? receivedAt + maxSkewMs : TIMESTAMP_BOUNDS.maxMs;
  const latest = Math.min(ahead, TIMESTAMP_BOUNDS.maxMs);
  if (updateTime <= latest) return { updateTime, adjusted: null };
  const used = isTimestampInBounds(receivedAt) ? receivedAt : TIMESTAMP_BOUNDS.maxMs;
  const reason = updateTime > TIMESTAMP_BOUNDS.maxMs ? "after-range" : "ahead-of-receipt";
  return { updateTime: used, adjusted: { given: updateTime, reason, used } };
}
