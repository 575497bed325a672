import { FinalityError } from "../../core/errors.js";
import { isoTime } from "../../core/iso-time.js";

/**
 * The port speaks epoch milliseconds; the time columns are timestamptz (except max_update_time,
 * the provider's ordering key: double precision ms), which node-postgres reads as `Date`. A
 * time is sent as its ISO 8601 text, which every timestamptz parameter takes: node-postgres
 * would format a `Date` itself in JavaScript, field by field (~6,500 instructions a value). Years
 * outside 1–9999, where ISO text has a sign and six digits that PostgreSQL does not read, go as
 * a `Date` for node-postgres to write (with its ` BC`).
 */
export function toTime(ms: number): string | Date;
export function toTime(ms: number | null): string | Date | null;
export function toTime(ms: number | null): string | Date | null {
  if (ms === null) return null;
  if (ms >= FIRST_ISO_YEAR_MS && ms < AFTER_ISO_YEARS_MS) return isoTime(ms);
  const date = new Date(ms);
  // Out of Date's range (±8.64e15 ms) would surface as a raw RangeError from the driver.
  if (Number.isNaN(date.getTime())) {
    throw new FinalityError("internal", `time ${ms} is not a storable epoch-milliseconds value`, {
      details: { ms },
    });
  }
  return date;
}

/** 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z: the years whose ISO text has four digits. */
const FIRST_ISO_YEAR_MS = -62_135_596_800_000;
const AFTER_ISO_YEARS_MS = 253_402_300_800_000;

export function fromTime(date: Date): number;
export function fromTime(date: Date | null): number | null;
export function fromTime(date: Date | null): number | null {
  return date === null ? null : date.getTime();
}

/**
 * A jsonb parameter, sent as JSON text that the statement casts (`$n::text::jsonb`, see `param`).
 * Sent as a value instead, node-postgres would send an array as a PostgreSQL array
 * literal (`{false}`) and a string as its bare text, neither of which a jsonb column takes as JSON. undefined and null become SQL NULL, as on SQLite.
 */
export function jsonValue(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const text = JSON.stringify(value);
  // jsonb holds neither NUL nor half a surrogate pair: both become U+FFFD (rare; checked cheaply).
  return UNSTORABLE_ESCAPE.test(text) ? JSON.stringify(storable(value)) : text;
}

const UNSTORABLE_ESCAPE = /\\u0000|\\ud[89a-f][0-9a-f]{2}/i;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding NUL is the point.
const UNSTORABLE_CHARS = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function storable(value: unknown): unknown {
  if (typeof value === "string") return value.replace(UNSTORABLE_CHARS, "\ufffd");
  if (Array.isArray(value)) return value.map(storable);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [storable(key), storable(item)]));
  return value;
}
