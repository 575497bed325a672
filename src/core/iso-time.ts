/** Epoch milliseconds as the public JSON shapes write a time: ISO-8601 in UTC; null stays null. */
export const isoOrNull = (ms: number | null): string | null =>
  ms === null ? null : new Date(ms).toISOString();
