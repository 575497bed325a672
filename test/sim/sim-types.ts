import type { TerminalState } from "../../src/core/states.js";

/**
 * The simulator's vocabulary. A schedule is pure data: a seed, the hidden truth (each provider
 * job's timeline, each run's worker plans) and a list of steps, each carrying its own random
 * seed, so that removing a step while shrinking leaves the other steps' choices unchanged.
 */

/** Timings of the simulated deployment, in simulated milliseconds. */
export const SIM = {
  start: Date.UTC(2026, 0, 1),
  graceMs: 10_000,
  reconcileMinMs: 2_000,
  reconcileMaxMs: 20_000,
  stuckAfterMs: 90_000,
  pollTimeoutMs: 5_000,
  /** The heal phase ticks like the real loops (1 s); its deadlines allow one tick. */
  tickMs: 1_000,
  /** Largest Retry-After a provider's 429 asks for: below the backoff cap, so the cap bounds it. */
  maxRetryAfterMs: 15_000,
  /** The `beta` lane's rate limit (per second, burst). */
  betaRate: { perSecond: 5, burst: 5 },
  effectTimeoutMs: 5_000,
  effectLeaseMs: 10_000,
  effectRetryMs: [1_000, 2_000, 5_000, 10_000] as readonly number[],
  leaseSeconds: 10,
  maxAttempts: 3,
  runRetry: { baseDelayMs: 1_000, maxDelayMs: 10_000 },
  webhookToleranceSeconds: 300,
  senderMaxAttempts: 3,
  /** The heal phase gives up (and the liveness invariants fail) after this long. */
  healCapMs: 900_000,
} as const;

export const PROVIDERS = ["acme", "beta"] as const;
export type SimProvider = (typeof PROVIDERS)[number];
export const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** What the sender does with the webhook for one timeline step. */
export type SenderPlan = "send" | "never-sent" | "sent-twice";

export interface TimelineStep {
  afterMs: number;
  state: "pending" | "running" | TerminalState;
  sender: SenderPlan;
}

/** A provider job: its hidden true timeline, and whether its events carry `seq` or only `updateTime`. */
export interface JobPlan {
  provider: SimProvider;
  id: string;
  withSeq: boolean;
  timeline: TimelineStep[];
}

/** How a worker will handle the next attempt it claims. */
export interface AttemptPlan {
  startAfterMs: number;
  finishAfterMs: number;
  outcome: "succeeded" | "failed-retryable" | "failed-final" | "cancelled";
  progressUpdates: number;
}

export const NET_FAULTS = ["none", "drop", "duplicate", "delay"] as const;
export type NetFault = (typeof NET_FAULTS)[number];
export const POLL_FAULTS = ["ok", "stale", "slow", "failing", "429", "regress", "not-found"] as const;
export type PollFault = (typeof POLL_FAULTS)[number];
export const RECEIVER_FAULTS = ["ok", "5xx", "timeout-after-apply", "429"] as const;
export type ReceiverFault = (typeof RECEIVER_FAULTS)[number];
export type CrashMode = "before-commit" | "after-commit";

export type Step =
  | { kind: "advance"; ms: number }
  | { kind: "clock-jump"; ms: number }
  | { kind: "submit" }
  | { kind: "enqueue-run" }
  | { kind: "deliver"; pick: number; fault: NetFault; rand: number }
  | { kind: "reconcile"; rand: number }
  | { kind: "dispatch"; rand: number }
  /** `crashAfter`: the process dies before the commit of the sweep's transaction number n + 1. */
  | { kind: "sweep"; crashAfter: number | null }
  | { kind: "arm-crash"; afterTx: number; mode: CrashMode }
  | { kind: "arm-crash-after-send" }
  | { kind: "kill" }
  | { kind: "worker-kill"; worker: number }
  | { kind: "worker-pause"; worker: number; ms: number }
  | { kind: "skew"; ms: number }
  | { kind: "cancel-run"; pick: number };

export type StepKind = Step["kind"];

export interface Schedule {
  seed: number;
  jobs: JobPlan[];
  /** Attempt plans, consumed in claim order by whichever worker claims. */
  attemptPlans: AttemptPlan[];
  workers: number;
  steps: Step[];
}

/** Faults counted in the summary, by kind. */
export const FAULT_KINDS = [
  "net-drop",
  "net-duplicate",
  "net-delay",
  "net-reorder",
  "webhook-never-sent",
  "webhook-sent-twice",
  "sender-gave-up",
  "clock-jump",
  "sender-skew",
  "poll-stale",
  "poll-slow",
  "poll-failing",
  "poll-429",
  "poll-regress",
  "poll-404",
  "receiver-5xx",
  "receiver-timeout-after-apply",
  "receiver-429",
  "crash-before-commit",
  "crash-after-commit",
  "crash-after-send",
  "crash-mid-sweep",
  "crash-at-step-boundary",
  "worker-killed",
  "worker-paused",
  "heartbeat-dropped",
  "run-cancelled",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Thrown at the store boundary when the simulated process has crashed. */
export class SimCrash extends Error {
  override readonly name = "SimCrash";
}
