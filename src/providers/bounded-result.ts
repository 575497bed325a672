import { boundJsonValue } from "../core/bounded-value.js";

/**
 * A provider object trimmed to what the ledger may store. When the full value is too large or
 * too deep, the summary is kept instead, marked `truncated` (the full object stays at the
 * provider, reachable by the job's id); a summary that is itself unstorable (a huge `metrics`, a
 * deep `model`) gives way to the bare marker. The ingest path bounds every value again, so this
 * only chooses the most useful thing to keep.
 */
export function boundedResult<T>(
  full: T,
  summary: () => Record<string, unknown>,
): T | Record<string, unknown> {
  if (boundJsonValue(full) === full) return full;
  return boundJsonValue({ ...summary(), truncated: true }) as Record<string, unknown>;
}
