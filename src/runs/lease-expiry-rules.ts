import { assertNever } from "../core/errors.js";
import {
  type Attempt,
  DEFAULT_MAX_UNSTARTED_RELEASES,
  isFinishedAttempt,
  isLiveAttempt,
  isRevokedAttempt,
  isTerminalRun,
  LEASE_EXPIRED_BEFORE_START_CODE,
  LEASE_EXPIRED_CODE,
  type NewRunEvent,
  type Run,
  unstartedReleasesOf,
} from "../core/run-model.js";
import { releaseLease, requeueRun, settleRun } from "./run-transitions.js";

export const LEASE_EXPIRY_OUTCOMES = [
  "not_due",
  "already_expired",
  "terminal_released",
  "cancellation_pending",
  "unstarted_released",
  "unstarted_lost",
  "lost_retry",
  "lost_final",
] as const;
export type LeaseExpiryOutcome = (typeof LEASE_EXPIRY_OUTCOMES)[number];

type LeaseRunView = Pick<Run, "status" | "generation" | "cancelRequested" | "attemptCount" | "maxAttempts">;
type LeaseAttemptView = Pick<Attempt, "status" | "generation" | "leaseExpiresAt">;

/**
 * What to do with one attempt's lease at `now`. Pure. First matching row wins:
 *
 * | # | attempt status               | due | run                                        | cancel | outcome              |
 * |---|------------------------------|-----|--------------------------------------------|--------|----------------------|
 * | 1 | lost, released               | any | any                                        | any    | already_expired      |
 * | 2 | any other                    | no  | any                                        | any    | not_due              |
 * | 3 | succeeded, failed, cancelled | yes | any                                        | any    | terminal_released    |
 * | 4 | claimed, starting, running   | yes | terminal, queued, or another generation    | any    | terminal_released    |
 * | 5 | claimed, starting, running   | yes | dispatching/running, this generation       | yes    | cancellation_pending |
 * | 6 | claimed                      | yes | ditto, released unstarted < max times      | no     | unstarted_released   |
 * | 7 | claimed                      | yes | ditto, released unstarted >= max times     | no     | unstarted_lost       |
 * | 8 | starting, running            | yes | ditto, attempts left                       | no     | lost_retry           |
 * | 9 | starting, running            | yes | ditto, attempts spent                      | no     | lost_final           |
 *
 * `due` means the lease's expiry time has come (expiresAt <= now). Row 1 comes before row 2
 * because a revoked attempt holds no lease at all: whatever its old expiry said, a second sweep
 * of it must change nothing. Row 6 does not spend an attempt: the worker never began the work.
 * Row 7 bounds row 6: a run whose worker dies before its first heartbeat every time (it crashes
 * on the input) would otherwise be handed out for ever; "released unstarted" is
 * `unstartedReleasesOf(run)` and `max` is `maxUnstartedReleases` (default 5; 0 ends the run at
 * its first such expiry).
 */
export function decideLeaseExpiry(
  run: LeaseRunView,
  attempt: LeaseAttemptView,
  now: number,
  maxUnstartedReleases: number = DEFAULT_MAX_UNSTARTED_RELEASES,
): LeaseExpiryOutcome {
  if (isRevokedAttempt(attempt.status)) return "already_expired";
  const due = attempt.leaseExpiresAt !== null && attempt.leaseExpiresAt <= now;
  if (!due) return "not_due";
  if (isFinishedAttempt(attempt.status)) return "terminal_released";
  const owns =
    attempt.generation === run.generation && (run.status === "dispatching" || run.status === "running");
  if (isTerminalRun(run.status) || !owns) return "terminal_released";
  if (run.cancelRequested) return "cancellation_pending";
  if (attempt.status === "claimed")
    return unstartedReleasesOf(run) < maxUnstartedReleases ? "unstarted_released" : "unstarted_lost";
  return run.attemptCount < run.maxAttempts ? "lost_retry" : "lost_final";
}

interface LeaseExpiryChange {
  outcome: LeaseExpiryOutcome;
  /** Null when the run is not written. */
  run: Run | null;
  /** Null when the attempt is not written. */
  attempt: Attempt | null;
  events: NewRunEvent[];
}

/**
 * The writes for an outcome, pure. Every event's dedupe key is
 * `lease-expiry:{attemptId}:{generation}:{phase}`, so that a second sweep (or a second sweeper
 * racing the first) can never record the same expiry twice.
 */
export function expireLease(
  run: Run,
  attempt: Attempt,
  now: number,
  retryDelayMs: number,
  maxUnstartedReleases: number = DEFAULT_MAX_UNSTARTED_RELEASES,
): LeaseExpiryChange {
  const outcome = decideLeaseExpiry(run, attempt, now, maxUnstartedReleases);
  const event = (phase: string, type: string, detail: Record<string, unknown> = {}): NewRunEvent => ({
    dedupeKey: `lease-expiry:${attempt.id}:${attempt.generation}:${phase}`,
    runId: run.id,
    attemptId: attempt.id,
    actor: "reconciler",
    type,
    at: now,
    detail: { outcome, generation: attempt.generation, leaseExpiresAt: attempt.leaseExpiresAt, ...detail },
  });
  const lostError = {
    code: LEASE_EXPIRED_CODE,
    message: `the lease of attempt ${attempt.id} (generation ${attempt.generation}) expired before it finished`,
  };
  switch (outcome) {
    case "not_due":
    case "already_expired":
      return { outcome, run: null, attempt: null, events: [] };
    case "terminal_released": {
      const status = isLiveAttempt(attempt.status) ? "released" : attempt.status;
      return {
        outcome,
        run: null,
        attempt: releaseLease(attempt, status, now),
        events: [event(outcome, "lease.released", { attemptStatus: status })],
      };
    }
    case "cancellation_pending":
      return {
        outcome,
        run: settleRun(run, "cancelled", now, { error: { code: "CANCELLED", message: "cancel requested" } }),
        attempt: { ...releaseLease(attempt, "cancelled", now), error: lostError },
        events: [
          event(outcome, "lease.cancellation_pending"),
          event("cancelled", "run.cancelled", { runStatus: "cancelled" }),
        ],
      };
    case "unstarted_released":
      return {
        outcome,
        run: { ...requeueRun(run, now, now), attemptCount: Math.max(0, run.attemptCount - 1) },
        attempt: releaseLease(attempt, "released", now),
        events: [event(outcome, "lease.unstarted_released", { runStatus: "queued" })],
      };
    case "unstarted_lost": {
      // The attempt is given back like its unstarted predecessors (no worker began it, so it
      // is not `lost`, which says a worker was lost mid-work); the run ends for good.
      const neverStarted = {
        code: LEASE_EXPIRED_BEFORE_START_CODE,
        message: `the lease ran out before the worker's first heartbeat ${unstartedReleasesOf(run) + 1} times (at most ${maxUnstartedReleases} releases before start are allowed); last attempt ${attempt.id} (generation ${attempt.generation})`,
      };
      return {
        outcome,
        run: settleRun(run, "lost", now, { error: neverStarted }),
        attempt: { ...releaseLease(attempt, "released", now), error: neverStarted },
        events: [
          event(outcome, "run.lost", { runStatus: "lost", unstartedReleases: unstartedReleasesOf(run) }),
        ],
      };
    }
    case "lost_retry":
      return {
        outcome,
        run: requeueRun(run, now, now + retryDelayMs),
        attempt: { ...releaseLease(attempt, "lost", now), error: lostError },
        events: [event(outcome, "attempt.lost", { runStatus: "queued", retryAt: now + retryDelayMs })],
      };
    case "lost_final":
      return {
        outcome,
        run: settleRun(run, "lost", now, { error: lostError }),
        attempt: { ...releaseLease(attempt, "lost", now), error: lostError },
        events: [event(outcome, "attempt.lost", { runStatus: "lost" })],
      };
    default:
      return assertNever(outcome, "lease expiry outcome");
  }
}
