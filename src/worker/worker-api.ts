import type { Claim, WorkerEventInput } from "../client/client-types.js";
import { createFinalityClient } from "../client/finality-client.js";
import { FinalityClientError } from "../client/http-call.js";

/** The worker API as the worker client uses it: `finality/client`'s calls, sorted by what to do next. */

/** A claimed run, as the handler receives it. */
export interface ClaimedRun {
  id: string;
  kind: string;
  input: unknown;
  attemptCount: number;
  maxAttempts: number;
  attempt: { id: string; generation: number; leaseExpiresAt: string; leaseSeconds: number };
}

type CallResult<T> =
  | { kind: "ok"; value: T }
  /** 409: the attempt is no longer this worker's; stop working on it. */
  | { kind: "stale"; reason: string }
  /** Network error, 5xx, 429: worth trying again. */
  | { kind: "retry"; error: Error }
  /** Any other 4xx: a bug or a configuration error; trying again will not help. */
  | { kind: "refused"; error: Error };

interface WorkerApiOptions {
  baseUrl: string;
  token?: string | undefined;
  fetch?: typeof fetch | undefined;
  /**
   * Longest wait for one answer (default 10 s; a claim waits its `waitSeconds` more): a call that
   * hangs on a half-open connection must not stop the heartbeats that keep the lease.
   */
  requestTimeoutMs?: number | undefined;
}

/** The claim a worker's end asks for with it (the report's `next`): a claim without its wait. */
export interface NextClaimBody {
  kinds?: readonly string[];
  leaseSeconds: number;
  start?: boolean;
}

export interface WorkerApi {
  claim(
    workerId: string,
    body: NextClaimBody & { waitSeconds: number },
    signal: AbortSignal,
  ): Promise<CallResult<ClaimedRun | null>>;
  heartbeat(attemptId: string, generation: number): Promise<CallResult<{ cancelRequested: boolean }>>;
  /** A report; `next` in the answer when the body asked for it: the worker's next run, or null. */
  event(
    attemptId: string,
    body: Record<string, unknown>,
  ): Promise<CallResult<{ outcome: string; next?: ClaimedRun | null }>>;
}

export function createWorkerApi(options: WorkerApiOptions): WorkerApi {
  const client = createFinalityClient({
    baseUrl: options.baseUrl,
    token: options.token,
    fetch: options.fetch,
    timeoutMs: options.requestTimeoutMs ?? 10_000,
  });

  return {
    async claim(workerId, body, signal) {
      const result = await classify(() => client.claimRun(workerId, body, { signal }));
      if (result.kind !== "ok") return result;
      return { kind: "ok", value: result.value === null ? null : claimedRunOf(result.value) };
    },
    heartbeat: (attemptId, generation) => classify(() => client.heartbeat(attemptId, { generation })),
    async event(attemptId, body) {
      const result = await classify(() =>
        client.reportAttemptEvent(attemptId, body as unknown as WorkerEventInput),
      );
      if (result.kind !== "ok") return result;
      const { outcome, next } = result.value;
      if (next === undefined) return { kind: "ok", value: { outcome } };
      return { kind: "ok", value: { outcome, next: next === null ? null : claimedRunOf(next) } };
    },
  };
}

function claimedRunOf({ run, attempt }: Claim): ClaimedRun {
  return {
    id: run.id,
    kind: run.kind,
    input: run.input,
    attemptCount: run.attemptCount,
    maxAttempts: run.maxAttempts,
    // A claim always grants a lease; null is for attempts that no longer hold one.
    attempt: { ...attempt, leaseExpiresAt: attempt.leaseExpiresAt as string },
  };
}

/**
 * What the worker does next with a call's failure: a 409 means the attempt is no longer this
 * worker's; no answer, a 5xx, a 429 or a 2xx that is not JSON is worth another try; any other
 * 4xx (or a body JSON cannot hold) will not get better by trying again.
 */
async function classify<T>(call: () => Promise<T>): Promise<CallResult<T>> {
  try {
    return { kind: "ok", value: await call() };
  } catch (error) {
    if (!(error instanceof FinalityClientError)) throw error;
    if (error.kind === "http" && error.status === 409) {
      const reason = error.problem?.reason ?? error.problem?.detail ?? "stale";
      return { kind: "stale", reason: String(reason) };
    }
    const retry =
      error.kind === "unreachable" ||
      error.kind === "not-json" ||
      (error.kind === "http" && (error.status >= 500 || error.status === 429));
    return retry ? { kind: "retry", error } : { kind: "refused", error };
  }
}
