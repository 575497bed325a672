import { FinalityClientError } from "../client/http-call.js";
import type { ClaimedRun, NextClaimBody, WorkerApi } from "./worker-api.js";

/** Why a handler's signal fired. */
export type AbortReason = "cancel-requested" | "lease-lost" | "shutdown";

/** Thrown into a handler's signal: `reason` says why it should stop. */
export class RunAbortedError extends Error {
  override readonly name = "RunAbortedError";
  constructor(readonly reason: AbortReason) {
    super(`run aborted: ${reason}`);
  }
}

/** Throw this (or any error with `retryable: false`) to fail a run without retries. */
export class PermanentRunError extends Error {
  override readonly name = "PermanentRunError";
  readonly retryable = false;
}

export interface HandlerContext {
  /** Fires when the run is cancelled, the lease is lost, or the worker is stopped with `abandon`. */
  signal: AbortSignal;
  /** Reports progress (kept as the attempt's latest); resolves once recorded or given up. */
  progress(value: unknown): Promise<void>;
}

export type RunHandler = (run: ClaimedRun, context: HandlerContext) => Promise<unknown>;

interface AttemptRunnerOptions {
  api: WorkerApi;
  /** The claim recorded `started`; otherwise it is reported first, as sequence 1. */
  startedByClaim: boolean;
  handler: RunHandler;
  /** Heartbeat every lease × this (default 1/3): two may be lost before the lease runs out. */
  heartbeatFraction: number;
  /** Tries per report before giving up (the lease then decides). */
  reportTries: number;
  onError: (error: Error, run: ClaimedRun) => void;
  /** Sleeps that stop early when the worker stops. */
  sleep: (ms: number) => Promise<void>;
  /**
   * Asked as the attempt's end is reported: the claim to make with it (the worker's next run,
   * in the same call), or undefined for none (the worker is stopping).
   */
  nextClaim?: () => NextClaimBody | undefined;
  /** The server named `next` as unknown (it predates it): the end was sent again without it. */
  onNextRefused?: () => void;
}

type ReportOutcome =
  | { kind: "ok"; next?: ClaimedRun | null }
  | { kind: "stale" | "given-up" }
  | { kind: "refused"; message: string };

export interface RunningAttempt {
  /** Resolves when the attempt is over: with the next run its end claimed, if it asked and got one. */
  readonly done: Promise<ClaimedRun | null>;
  /** Stops heartbeats and fires the handler's signal; nothing more is reported. */
  abandon(): void;
}

/**
 * Runs one claimed attempt: reports `started` unless the claim did (`startedByClaim`), runs the
 * handler while heartbeating, and reports `succeeded`, `failed` or `cancelled` with increasing
 * sequence numbers from 1. A 409 on any call means
 * the lease is gone (expired, or another worker holds the run): the handler's signal fires and
 * nothing more is sent. Reports are sent one at a time, in order; a lost answer is retried with
 * the same sequence, which the server records once.
 */
export function runAttempt(run: ClaimedRun, options: AttemptRunnerOptions): RunningAttempt {
  const { api, attempt } = { api: options.api, attempt: run.attempt };
  const controller = new AbortController();
  let abortReason: AbortReason | null = null;
  let sequence = 0;
  let chain: Promise<void> = Promise.resolve();

  function abort(reason: AbortReason): void {
    if (abortReason !== null) return;
    abortReason = reason;
    controller.abort(new RunAbortedError(reason));
  }

  /** Resolves with how the report ended: sent, the lease gone, refused (with why) or given up. */
  function report(type: string, fields: Record<string, unknown> = {}, end = false): Promise<ReportOutcome> {
    sequence += 1;
    const body: Record<string, unknown> = { generation: attempt.generation, sequence, type, ...fields };
    const sent = chain
      .then(async (): Promise<ReportOutcome> => {
        // Asked once the reports before it are answered: a worker stopping meanwhile asks for none.
        const next = end ? options.nextClaim?.() : undefined;
        if (next !== undefined) body.next = next;
        for (let tries = 1; abortReason !== "lease-lost" && abortReason !== "shutdown"; tries++) {
          const result = await api.event(attempt.id, body);
          if (result.kind === "ok") return { kind: "ok", next: result.value.next };
          if (result.kind === "stale") {
            abort("lease-lost");
            return { kind: "stale" };
          }
          if (result.kind === "refused" && body.next !== undefined && isBadRequest(result.error)) {
            // The end is sent again without its claim: a server older than `next` names it as an
            // unknown field (then no end asks again), and a claim refused for its own sake (a pool
            // whose kinds changed) must not cost the end its report.
            delete body.next;
            if (refusesNext(result.error)) options.onNextRefused?.();
            tries -= 1;
            continue;
          }
          options.onError(result.error, run);
          if (result.kind === "refused") return { kind: "refused", message: result.error.message };
          if (tries >= options.reportTries) return { kind: "given-up" };
          await options.sleep(Math.min(5_000, 100 * 2 ** tries));
        }
        return { kind: "stale" };
      })
      .catch((error: unknown): ReportOutcome => {
        options.onError(asError(error), run);
        return { kind: "given-up" };
      });
    chain = sent.then(() => undefined);
    return sent;
  }

  let beating = false;
  const heartbeatMs = Math.max(50, attempt.leaseSeconds * 1000 * options.heartbeatFraction);
  const timer = setInterval(async () => {
    if (beating || abortReason === "lease-lost") return;
    beating = true;
    try {
      const result = await api.heartbeat(attempt.id, attempt.generation);
      if (result.kind === "ok" && result.value.cancelRequested) abort("cancel-requested");
      else if (result.kind === "stale") abort("lease-lost");
      else if (result.kind !== "ok") options.onError(result.error, run);
    } catch (error) {
      options.onError(asError(error), run);
    } finally {
      beating = false;
    }
  }, heartbeatMs);

  if (!options.startedByClaim) void report("started");
  const done = (async () => {
    let outcome: { ok: true; output: unknown } | { ok: false; error: unknown };
    try {
      const output = await options.handler(run, {
        signal: controller.signal,
        progress: async (value) => {
          await report("progress", { progress: value });
        },
      });
      outcome = { ok: true, output };
    } catch (error) {
      outcome = { ok: false, error };
    }
    clearInterval(timer);
    if (abortReason === "lease-lost" || abortReason === "shutdown") return null;
    let sent: ReportOutcome;
    if (outcome.ok) {
      sent = await report("succeeded", outcome.output === undefined ? {} : { output: outcome.output }, true);
      // The server refused the result (too large, not JSON): the run fails once, saying why,
      // instead of running out its lease and being executed again on every attempt.
      if (sent.kind === "refused")
        sent = await report(
          "failed",
          { error: { code: "RESULT_REFUSED", message: sent.message.slice(0, 1000), retryable: false } },
          true,
        );
    } else if (abortReason === "cancel-requested")
      sent = await report(
        "cancelled",
        { error: { code: "CANCELLED", message: "cancelled on request" } },
        true,
      );
    else sent = await report("failed", { error: errorToJson(outcome.error) }, true);
    await chain;
    return sent.kind === "ok" ? (sent.next ?? null) : null;
  })();

  return {
    done,
    abandon() {
      clearInterval(timer);
      abort("shutdown");
    },
  };
}

function isBadRequest(error: Error): error is FinalityClientError {
  return error instanceof FinalityClientError && error.status === 400;
}

/** A 400 naming `next`: the server predates ends that claim the next run. */
function refusesNext(error: Error): boolean {
  return isBadRequest(error) && error.problem?.field === "next";
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

function errorToJson(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    const retryable = (error as { retryable?: unknown }).retryable;
    return {
      name: error.name,
      message: error.message,
      ...(typeof retryable === "boolean" ? { retryable } : {}),
    };
  }
  return { message: String(error) };
}
