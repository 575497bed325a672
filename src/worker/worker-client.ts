import { FinalityClientError } from "../client/http-call.js";
import { type RunHandler, type RunningAttempt, runAttempt } from "./attempt-runner.js";
import { type ClaimedRun, createWorkerApi } from "./worker-api.js";

export {
  type AbortReason,
  type HandlerContext,
  PermanentRunError,
  RunAbortedError,
  type RunHandler,
} from "./attempt-runner.js";
export type { ClaimedRun } from "./worker-api.js";

export interface WorkerOptions {
  /** Where `finality serve` listens, e.g. http://127.0.0.1:8787 */
  baseUrl: string;
  /** The worker pool's bearer token. */
  token?: string;
  /** Names this process in the ledger (attempts, logs); unique per worker process is best. */
  workerId: string;
  /** Kinds to claim; all the pool allows when omitted. */
  kinds?: readonly string[];
  handler: RunHandler;
  /** Lease asked for at each claim (default 30 s, 1–3600); heartbeats renew it at a third of that. */
  leaseSeconds?: number;
  /** Runs handled at once (default 1). */
  concurrency?: number;
  /** Long-poll per claim request (default 20 s; kept within 1–30, what the server takes). */
  waitSeconds?: number;
  /** On stop: let running handlers finish and report (default), or abandon them to their leases. */
  onStop?: "finish" | "abandon";
  /**
   * Errors that do not stop the worker: lost connections, refused reports, ... Default: printed
   * with console.error, at most one line per 10 s (the rest counted in the next line), so a
   * server that is down is seen at once without flooding the output.
   */
  onError?: (error: Error, run?: ClaimedRun) => void;
  fetch?: typeof fetch;
  /** Longest wait for one answer besides a claim's long-poll (default 10 s). */
  requestTimeoutMs?: number;
}

export interface Worker {
  start(): void;
  /** Stops claiming; then finishes or abandons the runs in hand (per `onStop`) and resolves. */
  stop(): Promise<void>;
  /** Runs being handled now. */
  readonly active: number;
}

/**
 * A worker for runs: claims with long-polls, runs the handler with automatic heartbeats, passes
 * cancellation (and loss of the lease) to the handler as an AbortSignal, reports the result or
 * the error, and stops gracefully.
 */
export function createWorker(options: WorkerOptions): Worker {
  const api = createWorkerApi({
    baseUrl: options.baseUrl,
    token: options.token,
    fetch: options.fetch,
    requestTimeoutMs: options.requestTimeoutMs,
  });
  const concurrency = Math.max(1, options.concurrency ?? 1);
  // Within what the server accepts: a refused claim would otherwise be retried forever, silently.
  const leaseSeconds = clamp(options.leaseSeconds ?? 30, 1, 3600);
  const waitSeconds = clamp(options.waitSeconds ?? 20, 1, 30);
  const onError = options.onError ?? rateLimitedErrorLog();
  const inHand = new Set<RunningAttempt>();
  let stopping = new AbortController();
  let slots: Promise<void>[] = [];
  let running = false;
  /** Whether claims ask the server to start their runs; cleared once a server says it cannot. */
  let claimStarts = true;
  /** Whether a run's end asks for the next run (`next`); cleared once a server says it cannot. */
  let endClaims = true;
  let abandoned: Promise<void> = new Promise(() => {});
  let abandonAll = () => {};

  /** Sleeps up to `ms`; returns early when the worker stops. */
  function sleep(ms: number): Promise<void> {
    const signal = stopping.signal;
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** A claim's body, without its wait: also what an end asks for with it (`next`). */
  function claimBody(start: boolean) {
    return {
      leaseSeconds,
      ...(start ? { start: true } : {}),
      ...(options.kinds ? { kinds: options.kinds } : {}),
    };
  }

  async function slot(): Promise<void> {
    let failures = 0;
    /** The run the last end claimed with it (`next`): handled without a claim of its own. */
    let handed: { run: ClaimedRun; start: boolean } | null = null;
    while (running || (handed !== null && options.onStop !== "abandon")) {
      let claimed: { run: ClaimedRun; start: boolean };
      if (handed !== null) {
        claimed = handed;
        handed = null;
      } else {
        // `start`: the claim records the run's `started` too; the handler runs as soon as it is here.
        const start = claimStarts;
        const result = await api.claim(
          options.workerId,
          { waitSeconds, ...claimBody(start) },
          stopping.signal,
        );
        // A run answered as the worker stops is handled like any other when stop() lets handlers
        // finish (it used to be dropped: its lease ran out and the attempt was spent for nothing).
        // When stop() abandons handlers, it is abandoned with them, to its lease.
        const gotOne = result.kind === "ok" && result.value !== null;
        if (!running && !(gotOne && options.onStop !== "abandon")) return;
        if (start && result.kind === "refused" && refusesStart(result.error)) {
          // A server older than `start` names it as an unknown field: claim as before, and report
          // `started` from here.
          claimStarts = false;
          continue;
        }
        if (result.kind !== "ok") {
          onError(result.kind === "stale" ? new Error(result.reason) : result.error);
          failures += 1;
          await sleep(Math.min(10_000, 250 * 2 ** Math.min(failures, 6)));
          continue;
        }
        failures = 0;
        if (result.value === null) continue;
        claimed = { run: result.value, start };
      }
      let nextStart = claimStarts;
      const attempt = runAttempt(claimed.run, {
        api,
        startedByClaim: claimed.start,
        handler: options.handler,
        heartbeatFraction: 1 / 3,
        reportTries: 8,
        onError,
        // Reports keep their backoff while a stop lets running handlers finish.
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        // The end claims this slot's next run in the same call, unless the worker is stopping:
        // one call per run instead of two.
        nextClaim: () => {
          if (!running || !endClaims) return undefined;
          nextStart = claimStarts;
          return claimBody(nextStart);
        },
        onNextRefused: () => {
          endClaims = false;
        },
      });
      inHand.add(attempt);
      // An abandoned handler that ignores its signal must not hold up stop().
      const next = await Promise.race([attempt.done, abandoned.then(() => null)]).finally(() =>
        inHand.delete(attempt),
      );
      if (next !== null) handed = { run: next, start: nextStart };
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      stopping = new AbortController();
      abandoned = new Promise((resolve) => {
        abandonAll = resolve;
      });
      slots = Array.from({ length: concurrency }, () => slot());
    },
    async stop() {
      running = false;
      // Ends the long-polls now. A claim whose request is cut off while it commits is given back
      // by the server; one answered just before is handled (see slot()).
      stopping.abort();
      if (options.onStop === "abandon") {
        for (const attempt of inHand) attempt.abandon();
        abandonAll();
      }
      await Promise.all(slots);
    },
    get active() {
      return inHand.size;
    },
  };
}

/**
 * An `onError` that prints the first error at once, then at most one line per `intervalMs`,
 * saying how many were not printed in between.
 */
export function rateLimitedErrorLog(
  options: { write?: (line: string) => void; intervalMs?: number; now?: () => number } = {},
): (error: Error, run?: ClaimedRun) => void {
  const write = options.write ?? ((line: string) => console.error(line));
  const intervalMs = options.intervalMs ?? 10_000;
  const now = options.now ?? Date.now;
  let lastAt = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  return (error, run) => {
    const at = now();
    if (at - lastAt < intervalMs) {
      suppressed += 1;
      return;
    }
    const more = suppressed > 0 ? ` (${suppressed} more since the last line)` : "";
    const about = run ? ` [run ${run.id}]` : "";
    write(`finality worker: ${error.message}${about}${more}`);
    lastAt = at;
    suppressed = 0;
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** A 400 naming `start`: the server predates claims that start their runs. */
function refusesStart(error: Error): boolean {
  return error instanceof FinalityClientError && error.status === 400 && error.problem?.field === "start";
}
