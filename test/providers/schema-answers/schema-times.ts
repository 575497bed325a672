import fc from "fast-check";

/** A field a schema marks optional or nullable: present with a value, `null`, or left out. */
export const ABSENT = Symbol("absent");
export type Maybe<T> = T | null | typeof ABSENT;

/** `value`, or null, or absent (the key is dropped by `objectOf`). */
export function maybe<T>(value: fc.Arbitrary<T>): fc.Arbitrary<Maybe<T>> {
  return fc.oneof(value, fc.constant(null), fc.constant(ABSENT as typeof ABSENT));
}

/** `value` or absent: a field the schema lets out but never sends as null. */
export function optional<T>(value: fc.Arbitrary<T>): fc.Arbitrary<T | typeof ABSENT> {
  return fc.oneof(value, fc.constant(ABSENT as typeof ABSENT));
}

/** The object without its absent fields, at any depth, as a provider would send it. */
export function objectOf(fields: Record<string, unknown>): Record<string, unknown> {
  return withoutAbsent(fields) as Record<string, unknown>;
}

function withoutAbsent(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAbsent);
  if (typeof value !== "object" || value === null) return value;
  const present = Object.entries(value).filter(([, field]) => field !== ABSENT);
  return Object.fromEntries(present.map(([key, field]) => [key, withoutAbsent(field)]));
}

const NOW_SECONDS = Math.floor(Date.UTC(2026, 0, 1) / 1000);

/**
 * Unix seconds as OpenAI's `"type": "integer", "format": "unixtime"` allows them: anywhere in the
 * 32-bit range and beyond it (JSON integers have no bound), with the edges named (0, negative,
 * 2038, huge) and times near now weighted in, since most answers carry those.
 */
export const unixSeconds: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: NOW_SECONDS - 86_400 * 30, max: NOW_SECONDS + 86_400 }),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  fc.constantFrom(0, -1, 1, 2 ** 31 - 1, -(2 ** 31), Number.MAX_SAFE_INTEGER, 31_536_000),
  fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }),
);

/** OpenAI's Response `created_at` is `"type": "number"`: fractional seconds as well. */
export const unixSecondsNumber: fc.Arbitrary<number> = fc.oneof(
  unixSeconds,
  fc.double({ min: -1e12, max: 1e12, noNaN: true, noDefaultInfinity: true }),
);

const pad = (value: number, width: number) => String(value).padStart(width, "0");

/**
 * RFC 3339 `date-time` texts (Anthropic's `format: date-time`, Google's Timestamp in JSON,
 * Replicate's ISO times): years 0000-9999, fractions of 0-9 digits (Google sends nanoseconds),
 * `Z` or a numeric offset. Weighted toward times near now.
 */
export const rfc3339: fc.Arbitrary<string> = fc
  .record({
    year: fc.oneof(fc.integer({ min: 2025, max: 2026 }), fc.integer({ min: 0, max: 9999 })),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    fraction: fc.oneof(fc.constant(""), fc.stringMatching(/^\.[0-9]{1,9}$/)),
    offset: fc.oneof(
      fc.constantFrom("Z", "z", "+00:00"),
      fc
        .tuple(fc.constantFrom("+", "-"), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
        .map(([sign, h, m]) => `${sign}${pad(h, 2)}:${pad(m, 2)}`),
    ),
  })
  .map(
    (t) =>
      `${pad(t.year, 4)}-${pad(t.month, 2)}-${pad(t.day, 2)}T${pad(t.hour, 2)}:${pad(t.minute, 2)}:${pad(t.second, 2)}${t.fraction}${t.offset}`,
  );

/** A status the provider's schema does not (yet) list besides `known`: recorded, never applied. */
export function unknownStatus(known: readonly string[]): fc.Arbitrary<string> {
  return fc
    .oneof(
      fc.constantFrom("paused_for_review", "archived", "STATE_NEW", "Completed", "done"),
      fc.stringMatching(/^[a-zA-Z_]{1,20}$/),
    )
    .filter((status) => !known.includes(status));
}

/** Short ids and texts where the schema says only `string`. */
export const someText: fc.Arbitrary<string> = fc.string({ maxLength: 12 });
export const count: fc.Arbitrary<number> = fc.oneof(fc.constant(0), fc.nat({ max: 100_000 }));
