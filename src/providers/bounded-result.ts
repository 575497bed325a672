import { exceedsDepth, jsonSize, LIMITS } from "../core/validation.js";

/**
 * A provider object trimmed to what the ledger may store. Adapters ingest without the API's
 * validation (they are trusted), so they must keep to the same size limit themselves: when the
 * full value is too large, the summary is kept instead, marked `truncated` (the full object stays
 * at the provider, reachable by the job's id).
 */
export function boundedResult<T>(
  full: T,
  summary: () => Record<string, unknown>,
): T | Record<string, unknown> {
  const size = exceedsDepth(full, LIMITS.jsonDepth) ? null : jsonSize(full);
  if (size !== null && size <= LIMITS.resultBytes) return full;
  return { ...summary(), truncated: true };
}
