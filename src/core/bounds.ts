import { FinalityError } from "./errors.js";

/**
 * The one definition of a timestamp Finality accepts from outside (a provider's `updateTime`,
 * an API caller's, a poll answer's): the years 2000 to 2200, in epoch milliseconds, both ends
 * included. Every edge checks against these same numbers.
 *
 * Why bound at all: any finite number used to be accepted. One far-future `updateTime` then
 * became the job's ordering key for good (every later same-rank update was `stale`), and a value
 * past what `Date` can hold made `toISOString()` throw on every view of the job.
 */
export const TIMESTAMP_BOUNDS = {
  /** 2000-01-01T00:00:00.000Z */
  minMs: 946_684_800_000,
  /** 2200-12-31T23:59:59.999Z */
  maxMs: 7_289_654_399_999,
  /** For messages and docs. */
  text: "2000-01-01T00:00:00Z to 2200-12-31T23:59:59.999Z",
} as const;

export function isTimestampInBounds(ms: number): boolean {
  return Number.isFinite(ms) && ms >= TIMESTAMP_BOUNDS.minMs && ms <= TIMESTAMP_BOUNDS.maxMs;
}

/** The 400 for a timestamp outside the bounds; nothing is stored. */
export function timestampOutOfBounds(field: string, ms: number): FinalityError {
  return new FinalityError(
    "invalid-observation",
    `${field}: ${describe(ms)} is outside the accepted range (${TIMESTAMP_BOUNDS.text})`,
    { details: { field, value: Number.isFinite(ms) ? ms : String(ms), bounds: TIMESTAMP_BOUNDS.text } },
  );
}

/** Throws `timestampOutOfBounds` unless `ms` is undefined or within the bounds. */
export function checkTimestamp(field: string, ms: number | undefined): void {
  if (ms !== undefined && !isTimestampInBounds(ms)) throw timestampOutOfBounds(field, ms);
}

function describe(ms: number): string {
  // A value Date cannot hold has no ISO form; show the number itself.
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `${ms} ms` : `${date.toISOString()} (${ms} ms)`;
}
