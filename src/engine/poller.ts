import type { Job, Observation } from "../core/model.js";

/** What one status poll of a provider found. */
export type PollResult =
  /** The provider's authoritative state, to ingest (source `reconcile`). */
  | { kind: "observed"; observation: Observation; suggestedIntervalMs?: number }
  /** The provider does not know the job: recorded on the job as an anomaly, never a state. */
  | { kind: "not-found" }
  /** The poll failed (timeout, 5xx, 429, network): counts against this job's backoff only. */
  | { kind: "failed"; error: string; retryAfterMs?: number; status?: number };

/** Asks a provider for one job's state. Adapters implement it; the reconciler calls it. */
export type Poller = (job: Job, signal: AbortSignal) => Promise<PollResult>;

/** A non-2xx HTTP answer from a provider's status API, classified for the reconciler. */
export function pollFailure(status: number, retryAfter: string | null): PollResult {
  if (status === 404) return { kind: "not-found" };
  const retryAfterMs = parseRetryAfter(retryAfter);
  return {
    kind: "failed",
    error: `status API answered ${status}`,
    status,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

/** Retry-After as delay-seconds or an HTTP date, in ms from now; undefined when absent or bad. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
