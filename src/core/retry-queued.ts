import { RUNS_PROVIDER } from "./run-model.js";

/**
 * A run sent back to the queue for another attempt (its lease ran out, or the attempt failed and
 * may be retried): its mirror job stays `running`, so the reducer records the observation as
 * `lower-rank`, but this is the designed retry, not an update out of order. The dashboard and
 * `finality jobs events` word it as such.
 */
export function isRetryQueued(event: { reason: string | null; provider?: string; rawState?: string | null }) {
  return event.reason === "lower-rank" && event.provider === RUNS_PROVIDER && event.rawState === "queued";
}
