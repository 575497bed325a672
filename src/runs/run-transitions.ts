import type { Random } from "../core/clock.js";
import type { Attempt, AttemptStatus, Run, RunStatus } from "../core/run-model.js";

/**
 * Pure run and attempt transitions. Each returns the next record with its version bumped, or
 * null when nothing changes; the service persists it with compare-and-set on the old version.
 */

interface NewRun {
  id: string;
  kind: string;
  input?: unknown;
  idempotencyKey?: string | undefined;
  maxAttempts: number;
}

export function newRun(spec: NewRun, now: number): Run {
  return {
    id: spec.id,
    kind: spec.kind,
    status: "queued",
    version: 1,
    input: spec.input ?? null,
    output: null,
    error: null,
    idempotencyKey: spec.idempotencyKey ?? null,
    maxAttempts: spec.maxAttempts,
    attemptCount: 0,
    generation: 0,
    currentAttemptId: null,
    cancelRequested: false,
    availableAt: now,
    createdAt: now,
    updatedAt: now,
    settledAt: null,
  };
}

/** A worker takes a queued run: a new attempt with the next generation and a fresh lease. */
export function claimRun(
  run: Run,
  claim: { attemptId: string; workerId: string; leaseMs: number },
  now: number,
): { run: Run; attempt: Attempt } {
  const generation = run.generation + 1;
  return {
    run: {
      ...run,
      status: "dispatching",
      version: run.version + 1,
      generation,
      attemptCount: run.attemptCount + 1,
      currentAttemptId: claim.attemptId,
      updatedAt: now,
    },
    attempt: {
      id: claim.attemptId,
      runId: run.id,
      workerId: claim.workerId,
      generation,
      status: "claimed",
      lastSequence: null,
      leaseMs: claim.leaseMs,
      leaseExpiresAt: now + claim.leaseMs,
      version: 1,
      output: null,
      error: null,
      progress: null,
      claimedAt: now,
      startedAt: null,
      heartbeatAt: null,
      endedAt: null,
      updatedAt: now,
    },
  };
}

/** A heartbeat extends a live lease; the first one shows the worker is alive (`starting`). */
export function extendLease(attempt: Attempt, leaseMs: number, now: number): Attempt {
  return {
    ...attempt,
    status: attempt.status === "claimed" ? "starting" : attempt.status,
    leaseMs,
    leaseExpiresAt: now + leaseMs,
    heartbeatAt: now,
    version: attempt.version + 1,
    updatedAt: now,
  };
}

/**
 * The API asks to cancel. A queued run is cancelled at once (no worker holds it, none will);
 * a dispatched or running one is flagged, and its worker learns it at its next heartbeat.
 */
export function requestCancel(run: Run, now: number): Run | null {
  if (run.status === "queued")
    return settleRun(run, "cancelled", now, {
      error: { code: "CANCELLED", message: "cancelled while queued" },
    });
  if ((run.status === "dispatching" || run.status === "running") && !run.cancelRequested)
    return { ...run, cancelRequested: true, version: run.version + 1, updatedAt: now };
  return null;
}

export function settleRun(
  run: Run,
  status: Extract<RunStatus, "succeeded" | "failed" | "cancelled" | "lost">,
  now: number,
  values: { output?: unknown; error?: unknown } = {},
): Run {
  return {
    ...run,
    status,
    version: run.version + 1,
    output: values.output !== undefined ? values.output : run.output,
    error: values.error !== undefined ? values.error : run.error,
    updatedAt: now,
    settledAt: now,
  };
}

/** Back to the queue, claimable from `availableAt`; the next claim brings a new generation. */
export function requeueRun(run: Run, now: number, availableAt: number): Run {
  return {
    ...run,
    status: "queued",
    version: run.version + 1,
    currentAttemptId: null,
    availableAt,
    updatedAt: now,
  };
}

/** Ends an attempt's hold on the run: no lease any more, in its final status. */
export function releaseLease(attempt: Attempt, status: AttemptStatus, now: number): Attempt {
  return {
    ...attempt,
    status,
    leaseExpiresAt: null,
    version: attempt.version + 1,
    endedAt: attempt.endedAt ?? now,
    updatedAt: now,
  };
}

export interface RunRetryPolicy {
  /** Delay before the first retry; doubles per attempt (default 1 s). */
  baseDelayMs: number;
  /** Longest delay (default 5 min). */
  maxDelayMs: number;
}

export const DEFAULT_RUN_RETRY: RunRetryPolicy = { baseDelayMs: 1_000, maxDelayMs: 300_000 };

/**
 * Delay before a run whose attempt number `attemptCount` (1-based) failed or was lost becomes
 * claimable again: exponential, capped, with ±20% jitter so that runs that failed together are
 * not all retried in the same instant.
 */
export function runRetryDelayMs(attemptCount: number, policy: RunRetryPolicy, random: Random): number {
  const exponent = Math.min(Math.max(attemptCount - 1, 0), 30);
  const base = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** exponent);
  return Math.round(base * (0.8 + 0.4 * random()));
}
