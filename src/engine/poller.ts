import type { Job, Observation } from "../core/model.js";
import { redactCredentials } from "../core/url-redaction.js";

/** What one status poll of a provider found. */
export type PollResult =
  /** The provider's authoritative state, to ingest (source `reconcile`). */
  | { kind: "observed"; observation: Observation; suggestedIntervalMs?: number }
  /** The provider does not know the job: recorded on the job as an anomaly, never a state. */
  | { kind: "not-found" }
  /**
   * The poll failed (timeout, 5xx, 429, network): counts against this job's backoff only. `url`
   * (credentials removed), `code` (ECONNREFUSED, …) and `status` say why; the job keeps them as
   * its last poll error.
   */
  | { kind: "failed"; error: string; retryAfterMs?: number; status?: number; url?: string; code?: string };

/** Asks a provider for one job's state. Adapters implement it; the reconciler calls it. */
export type Poller = (job: Job, signal: AbortSignal) => Promise<PollResult>;

/** A non-2xx HTTP answer from a provider's status API, classified for the reconciler. */
export function pollFailure(status: number, retryAfter: string | null, url?: string | URL): PollResult {
  if (status === 404) return { kind: "not-found" };
  const retryAfterMs = parseRetryAfter(retryAfter);
  const shown = url === undefined ? undefined : redactCredentials(url);
  return {
    kind: "failed",
    error:
      shown === undefined ? `status API answered ${status}` : `GET ${shown}: status API answered ${status}`,
    status,
    ...(shown === undefined ? {} : { url: shown }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

/**
 * A poll that got no answer: fetch's own message is only "fetch failed", so the cause chain is
 * read for the system error's code (ECONNREFUSED, ENOTFOUND, …) and message.
 */
export function unreachable(url: string | URL, error: unknown): PollResult & { kind: "failed" } {
  const shown = redactCredentials(url);
  const code = errorCode(error);
  // Some messages quote the URL itself (credentials included): never let them through.
  const cause = innermostMessage(error)
    ?.replaceAll(String(url), shown)
    .replace(/\/\/[^\s/@]+@/g, "//***@");
  return {
    kind: "failed",
    error: `GET ${shown}: status API ${code === "ETIMEDOUT" ? "timed out" : "unreachable"}: ${code ?? "error"}${cause && cause !== code ? ` (${cause})` : ""}`,
    url: shown,
    ...(code === undefined ? {} : { code }),
  };
}

/** The first `code` along the cause chain; a timeout (AbortSignal.timeout) is ETIMEDOUT. */
export function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current.name === "TimeoutError") return "ETIMEDOUT";
    if (current.name === "AbortError") return "ABORTED";
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && code !== "") return code;
    current = current.cause;
  }
  return undefined;
}

function innermostMessage(error: unknown): string | undefined {
  let message: string | undefined;
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    message = current.message;
    current = current.cause;
  }
  return message;
}

/** Retry-After as delay-seconds or an HTTP date, in ms from now; undefined when absent or bad. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
