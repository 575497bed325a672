import { assertNever } from "../core/errors.js";
import {
  type Attempt,
  type AttemptStatus,
  isRevokedAttempt,
  isTerminalRun,
  type Run,
} from "../core/run-model.js";
import { releaseLease, requeueRun, settleRun } from "./run-transitions.js";

export const WORKER_EVENT_TYPES = ["started", "progress", "succeeded", "failed", "cancelled"] as const;
export type WorkerEventType = (typeof WORKER_EVENT_TYPES)[number];

/** A callback from the worker holding an attempt. */
export interface WorkerEvent {
  generation: number;
  /** Per attempt, increasing in the order the worker sent them. */
  sequence: number;
  type: WorkerEventType;
  output?: unknown;
  /** `{ retryable: false }` (or any object with it) stops retries. */
  error?: unknown;
  progress?: unknown;
}

/** Why a worker call is refused (409): the caller must stop working on the attempt. */
export type FenceRefusal =
  | "stale-generation"
  | "lease-lost"
  | "superseded"
  | "lease-expired"
  | "attempt-finished";

export type FenceCheck = { kind: "ok" } | { kind: "refused"; reason: FenceRefusal };

/**
 * The fencing check every worker call passes first. `lease-expired` means the lease's time has
 * come but no sweeper has recorded it yet: the caller expires it (as the sweeper would) before
 * refusing, so that what the worker is told and what the ledger says never disagree.
 * A finished attempt still accepts callbacks (a retried report is a duplicate, not an error),
 * but not heartbeats (`forHeartbeat`): there is nothing left to keep alive.
 */
export function checkFence(
  run: Pick<Run, "generation">,
  attempt: Attempt,
  generation: number,
  now: number,
  forHeartbeat: boolean,
): FenceCheck {
  if (generation !== attempt.generation) return { kind: "refused", reason: "stale-generation" };
  if (isRevokedAttempt(attempt.status)) return { kind: "refused", reason: "lease-lost" };
  if (attempt.generation !== run.generation) return { kind: "refused", reason: "superseded" };
  if (attempt.leaseExpiresAt !== null && attempt.leaseExpiresAt <= now)
    return { kind: "refused", reason: "lease-expired" };
  if (forHeartbeat && attempt.leaseExpiresAt === null) return { kind: "refused", reason: "attempt-finished" };
  return { kind: "ok" };
}

const ATTEMPT_RANK: Record<AttemptStatus, number> = {
  claimed: 0,
  starting: 1,
  running: 2,
  succeeded: 3,
  failed: 3,
  cancelled: 3,
  lost: 3,
  released: 3,
};

const TARGET_RANK: Record<WorkerEventType, number> = {
  started: 2,
  progress: 2,
  succeeded: 3,
  failed: 3,
  cancelled: 3,
};

/**
 * Whether a callback that passed the fence moves the attempt: monotonic by status rank, then
 * by sequence, like the job reducer. A higher rank applies whatever its sequence (a completion
 * is never dropped for arriving early); the same non-terminal rank applies only when its
 * sequence is newer (progress updates); anything else is recorded as out of order.
 */
export function workerEventApplies(attempt: Attempt, event: WorkerEvent): boolean {
  const current = ATTEMPT_RANK[attempt.status];
  const target = TARGET_RANK[event.type];
  if (current === 3) return false;
  if (target > current) return true;
  return target === current && (attempt.lastSequence === null || event.sequence > attempt.lastSequence);
}

export interface WorkerEventChange {
  run: Run | null;
  attempt: Attempt;
  /** True when the run is queued again for a new attempt. */
  retried: boolean;
}

/** The writes for an applied callback. Pure. `retryDelayMs` is used only when a failure retries. */
export function applyWorkerEvent(
  run: Run,
  attempt: Attempt,
  event: WorkerEvent,
  now: number,
  retryDelayMs: number,
): WorkerEventChange {
  const lastSequence = Math.max(attempt.lastSequence ?? event.sequence, event.sequence);
  const base: Attempt = { ...attempt, lastSequence };
  const runOpen = !isTerminalRun(run.status);
  switch (event.type) {
    case "started":
    case "progress": {
      const next: Attempt = {
        ...base,
        status: "running",
        version: attempt.version + 1,
        updatedAt: now,
        startedAt: attempt.startedAt ?? now,
        progress: event.progress !== undefined ? event.progress : attempt.progress,
      };
      const started = run.status === "dispatching";
      return {
        run: started ? { ...run, status: "running", version: run.version + 1, updatedAt: now } : null,
        attempt: next,
        retried: false,
      };
    }
    case "succeeded": {
      const next = { ...releaseLease(base, "succeeded", now), output: event.output ?? null };
      const settled = runOpen ? settleRun(run, "succeeded", now, { output: event.output ?? null }) : null;
      return { run: settled, attempt: next, retried: false };
    }
    case "failed": {
      const error = event.error ?? { message: "failed" };
      const next = { ...releaseLease(base, "failed", now), error };
      if (!runOpen) return { run: null, attempt: next, retried: false };
      if (mayRetry(run, error))
        return { run: { ...requeueRun(run, now, now + retryDelayMs), error }, attempt: next, retried: true };
      return { run: settleRun(run, "failed", now, { error }), attempt: next, retried: false };
    }
    case "cancelled": {
      const next = releaseLease(base, "cancelled", now);
      const error = event.error ?? { code: "CANCELLED", message: "cancelled by the worker" };
      return {
        run: runOpen ? settleRun(run, "cancelled", now, { error }) : null,
        attempt: next,
        retried: false,
      };
    }
    default:
      return assertNever(event.type, "worker event type");
  }
}

/** A failure retries unless attempts are spent, a cancel is pending, or the error says not to. */
export function mayRetry(
  run: Pick<Run, "attemptCount" | "maxAttempts" | "cancelRequested">,
  error: unknown,
): boolean {
  const refused =
    typeof error === "object" && error !== null && (error as { retryable?: unknown }).retryable === false;
  return !refused && !run.cancelRequested && run.attemptCount < run.maxAttempts;
}
