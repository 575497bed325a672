/** Small readers of provider JSON: a wrong or missing field reads as undefined, never throws. */

/** Epoch ms from Unix seconds (OpenAI, Replicate metrics) when it is a number; else undefined. */
export function fromUnixSeconds(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value * 1000 : undefined;
}

/** Epoch ms from an RFC 3339 text (nanosecond fractions included); else undefined. */
export function fromRfc3339(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const millis = Date.parse(value);
  return Number.isFinite(millis) && millis >= 0 ? millis : undefined;
}

/** The largest of several optional times; undefined when none is set. */
export function latest(...times: (number | undefined)[]): number | undefined {
  let max: number | undefined;
  for (const time of times) if (time !== undefined && (max === undefined || time > max)) max = time;
  return max;
}

/** `value` as an object to read fields from; an empty one for anything else. */
export function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** `value` when it is a non-empty string; else undefined. */
export function textOf(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
