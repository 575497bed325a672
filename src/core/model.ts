import type { CanonicalState, Source } from "./states.js";

/** What a caller may do with a webhook for a job nobody registered. */
export type UnknownJobPolicy = "adopt" | "registered-only";

export interface JobKey {
  provider: string;
  id: string;
}

/** The ledger's record of one remote job. Times are epoch milliseconds. */
export interface Job extends JobKey {
  kind: string | null;
  state: CanonicalState;
  /** Bumped on every write; stores write with compare-and-set on it. */
  version: number;
  maxSeq: number | null;
  maxUpdateTime: number | null;
  submittedAt: number;
  updatedAt: number;
  settledAt: number | null;
  settledBy: Source | null;
  /** True once the application registered the job (false while only adopted from a webhook). */
  registered: boolean;
  pollAttempts: number;
  /** When a status poll last asked the provider; null until the first (and for a provider with no status API). */
  lastPolledAt: number | null;
  nextCheckAt: number | null;
  stuck: boolean;
  conflict: boolean;
  /** An anomaly the provider reported, e.g. 404 on poll; null when none. */
  anomaly: string | null;
  /** Why the last status poll failed; null when it did not (cleared by the next poll that answers). */
  lastPollError: PollError | null;
  metadata: unknown;
  result: unknown;
  error: unknown;
}

/**
 * A job's bookkeeping before any registration, poll or flag touched it: spread into every job
 * built outside a store (an adopted one, an intent's alert subject), so that a new field gets its
 * starting value in one place.
 */
export const UNTOUCHED_JOB = {
  registered: false,
  pollAttempts: 0,
  lastPolledAt: null,
  nextCheckAt: null,
  stuck: false,
  conflict: false,
  anomaly: null,
  lastPollError: null,
} as const satisfies Partial<Job>;

/** A failed status poll, with what an operator needs to act on it. */
export interface PollError {
  at: number;
  message: string;
  /** The URL polled, without credentials (user, password, key-like query values). */
  url: string | null;
  /** The network error's code (ECONNREFUSED, ENOTFOUND, ETIMEDOUT, …); null for an HTTP answer. */
  code: string | null;
  /** The HTTP status the provider answered; null when there was no answer. */
  status: number | null;
}

/**
 * One thing seen about a job, from any source. `state` is a canonical state name when the
 * adapter knew the provider's state, or anything else (recorded as `unknown-state`).
 */
export interface Observation extends JobKey {
  state: string;
  source: Source;
  /** The provider's own state name, kept for the audit trail. */
  rawState?: string | undefined;
  seq?: number | undefined;
  /** Epoch milliseconds of the provider's last update, when it says. */
  updateTime?: number | undefined;
  /** Sender's delivery id; a repeated one is not applied again (`duplicate-delivery`). */
  deliveryId?: string | undefined;
  kind?: string | undefined;
  result?: unknown;
  error?: unknown;
}

/** Why an observation did not change the job. */
export const IGNORE_REASONS = [
  "unknown-state",
  "unregistered",
  "duplicate-delivery",
  "duplicate",
  "conflicting-terminal",
  "lower-rank",
  "stale",
  "already-registered",
  "not-found",
  /** The job settled and retention deleted it; its tombstone answers for it (nothing changes). */
  "already-settled-pruned",
  /** No job yet under `registered-only`: kept in the early-completion inbox until it is registered. */
  "parked",
] as const;
export type IgnoreReason = (typeof IGNORE_REASONS)[number];

/** One row of the append-only audit trail. */
export interface JobEvent extends JobKey {
  seqNo: number;
  source: Source;
  rawState: string | null;
  state: string;
  applied: boolean;
  reason: IgnoreReason | null;
  deliveryId: string | null;
  dedupeKey: string | null;
  at: number;
  /** Small structured detail (e.g. observation seq/updateTime); never a whole payload. */
  detail: unknown;
}

export type EffectStatus = "pending" | "delivering" | "delivered" | "dead";

/** One row of the transactional outbox. */
export interface Effect {
  id: string;
  provider: string;
  jobId: string;
  name: string;
  idempotencyKey: string;
  status: EffectStatus;
  attempts: number;
  nextAttemptAt: number;
  leaseUntil: number | null;
  lastError: string | null;
  createdAt: number;
  deliveredAt: number | null;
  /** Terminal state that triggered the effect (or `stuck` for a stuck alert). */
  trigger: string;
  /** W3C traceparent of the span that enqueued it (its delivery spans continue that trace); null when untraced. */
  traceParent: string | null;
}
