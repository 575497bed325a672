import { assertNever } from "./errors.js";
import type { CanonicalState } from "./states.js";

/**
 * Runs executed by the application's own workers. Pure types and tables; no I/O.
 *
 * Run:     queued → dispatching → running → succeeded | failed | cancelled | lost
 *          (dispatching/running → queued again when an attempt is released or retried)
 * Attempt: claimed → starting → running → succeeded | failed | cancelled | lost | released
 *
 * | attempt   | means                                        | holds a lease |
 * |-----------|----------------------------------------------|---------------|
 * | claimed   | handed to a worker, no sign of life yet      | yes           |
 * | starting  | the worker heartbeated, has not said started | yes           |
 * | running   | the worker said started (or progress)        | yes           |
 * | succeeded, failed, cancelled | the worker said so            | no            |
 * | lost      | the lease ran out while starting or running  | no            |
 * | released  | given back unstarted, or the run moved on    | no            |
 */
export const RUN_STATUSES = [
  "queued",
  "dispatching",
  "running",
  "succeeded",
  "failed",
  "cancelled",
  "lost",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const ATTEMPT_STATUSES = [
  "claimed",
  "starting",
  "running",
  "succeeded",
  "failed",
  "cancelled",
  "lost",
  "released",
] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/** Who caused a run event. `reconciler` is the lease sweeper. */
type RunActor = "worker" | "reconciler" | "api";

/** The reserved provider name under which every run is mirrored into the job ledger. */
export const RUNS_PROVIDER = "runs";

/** Error code recorded on an attempt whose lease ran out while it was starting or running. */
export const LEASE_EXPIRED_CODE = "REMOTE_RUN_LEASE_EXPIRED";

/**
 * Error code of a run that ended `lost` because its lease ran out before any worker's first
 * heartbeat more times than allowed (`maxUnstartedReleases`): a run whose worker dies on it at
 * once (out of memory on its input, a crash at start) is not handed out for ever.
 */
export const LEASE_EXPIRED_BEFORE_START_CODE = "REMOTE_RUN_LEASE_EXPIRED_BEFORE_START";

/** Releases before start a run is allowed before the next one ends it `lost` (default). */
export const DEFAULT_MAX_UNSTARTED_RELEASES = 5;

/**
 * How many times this run's lease ran out before its worker's first heartbeat and the attempt
 * was given back: each claim adds one to both `generation` and `attemptCount`, and each such
 * release gives the attempt back (`attemptCount` − 1), so the difference is that count.
 */
export const unstartedReleasesOf = (run: Pick<Run, "generation" | "attemptCount">): number =>
  run.generation - run.attemptCount;

/** One run. Times are epoch milliseconds. */
export interface Run {
  id: string;
  kind: string;
  status: RunStatus;
  /** Bumped on every write; stores write with compare-and-set on it. */
  version: number;
  input: unknown;
  output: unknown;
  error: unknown;
  idempotencyKey: string | null;
  maxAttempts: number;
  /** Attempts claimed so far (an attempt released unstarted is given back). */
  attemptCount: number;
  /** Fencing token: the generation of the latest attempt; only grows. */
  generation: number;
  currentAttemptId: string | null;
  cancelRequested: boolean;
  /** Not claimable before this time (retry backoff). */
  availableAt: number;
  createdAt: number;
  updatedAt: number;
  settledAt: number | null;
}

/** One try of a run by one worker. */
export interface Attempt {
  id: string;
  runId: string;
  workerId: string;
  generation: number;
  status: AttemptStatus;
  /** Largest callback sequence applied; null before the first. */
  lastSequence: number | null;
  /** Lease length granted at claim; each heartbeat extends by this unless it asks otherwise. */
  leaseMs: number;
  /** Null once the attempt holds no lease (finished, lost or released). */
  leaseExpiresAt: number | null;
  version: number;
  output: unknown;
  error: unknown;
  progress: unknown;
  claimedAt: number;
  startedAt: number | null;
  heartbeatAt: number | null;
  endedAt: number | null;
  updatedAt: number;
}

/** One row of a run's append-only audit trail. `dedupeKey` is unique: a repeat changes nothing. */
export interface RunEvent {
  seqNo: number;
  dedupeKey: string;
  runId: string;
  attemptId: string | null;
  actor: RunActor;
  type: string;
  at: number;
  detail: unknown;
}

export type NewRunEvent = Omit<RunEvent, "seqNo">;

const TERMINAL_RUN: ReadonlySet<RunStatus> = new Set(["succeeded", "failed", "cancelled", "lost"]);
const FINISHED_ATTEMPT: ReadonlySet<AttemptStatus> = new Set(["succeeded", "failed", "cancelled"]);
const LIVE_ATTEMPT: ReadonlySet<AttemptStatus> = new Set(["claimed", "starting", "running"]);

export const isTerminalRun = (status: RunStatus): boolean => TERMINAL_RUN.has(status);
/** Ended by the worker's own report. */
export const isFinishedAttempt = (status: AttemptStatus): boolean => FINISHED_ATTEMPT.has(status);
/** Still holds the run: claimed, starting or running. */
export const isLiveAttempt = (status: AttemptStatus): boolean => LIVE_ATTEMPT.has(status);
/** Ended by the ledger: its lease ran out or it was given back. A worker call on it is stale. */
export const isRevokedAttempt = (status: AttemptStatus): boolean =>
  status === "lost" || status === "released";

/** The canonical state a run shows in the job ledger (its mirror job). */
export function canonicalOf(status: RunStatus): CanonicalState {
  switch (status) {
    case "queued":
    case "dispatching":
      return "pending";
    case "running":
      return "running";
    case "succeeded":
    case "failed":
    case "cancelled":
    case "lost":
      return status;
    default:
      return assertNever(status, "run status");
  }
}
