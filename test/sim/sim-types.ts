import type { TerminalState } from "../../src/core/states.js";
import type { SimConfig } from "./sim-config.js";

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
  effectRetryMs: [1_000, 2_000, 5_000, 10_000] as readonly number[],
  leaseSeconds: 10,
  maxAttempts: 3,
  /** Low, so that a run whose workers keep dying before their first heartbeat ends `lost` within a schedule. */
  maxUnstartedReleases: 1,
  runRetry: { baseDelayMs: 1_000, maxDelayMs: 10_000 },
  webhookToleranceSeconds: 300,
  senderMaxAttempts: 3,
  /** The heal phase gives up (and the liveness invariants fail) after this long. */
  healCapMs: 900_000,
} as const;

export const PROVIDERS = ["acme", "beta"] as const;
/** The provider instance with discovery sweeps on (its list API is the simulated provider's truth). */
export const DISCOVERY_PROVIDER = "acme";
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
  /** The kind the application registers it with (`render` matches the kind-filtered effect). */
  kind: "render" | "thumb";
  /** How long after its submission the application registers it: before, during or after it settles. */
  registerAfterMs: number;
  /** What its terminal step carries as `result` (succeeded) or `error` (failed). */
  payload: PayloadPlan;
  /**
   * The application crashed between the provider's accept and the registration, and never
   * registers it (only on `DISCOVERY_PROVIDER`, whose discovery sweeps must find it).
   */
  neverRegistered: boolean;
  /**
   * Issue 33: the provider sends one more `running` progress webhook with its completion, numbered
   * after it (a higher `seq`): whichever arrives first, the completion must win (reducer rule 5).
   */
  progressAfterEnd?: boolean;
}

/** A result or error value: a few bytes, several megabytes, or nested thousands of levels deep. */
export type PayloadPlan =
  | { shape: "small" }
  | { shape: "large"; bytes: number }
  | { shape: "deep"; depth: number };

/** How a worker will handle the next attempt it claims. */
export interface AttemptPlan {
  startAfterMs: number;
  finishAfterMs: number;
  outcome: "succeeded" | "failed-retryable" | "failed-final" | "cancelled";
  progressUpdates: number;
  /** The worker dies right after the claim, before its first heartbeat or `started`. */
  diesBeforeStart: boolean;
  /**
   * The claim starts the run (`start: true`, as the worker client claims): it records `started`
   * and the worker sends none. Until the worker's first heartbeat or report, a death is still a
   * release before start (`lease-unconfirmed-refunded`), as for a claim without `start`.
   */
  startsWithClaim: boolean;
  /** The sequence of the worker's first report: 0 or 1. */
  firstSequence: 0 | 1;
  /** The attempt's end claims the worker's next run in the same call (`next`, the worker client's way). */
  endClaimsNext: boolean;
  /** That end's first answer is lost on the way (or its call crashes): the worker sends it again. */
  endAnswerLost: boolean;
}

export const NET_FAULTS = ["none", "drop", "duplicate", "delay"] as const;
export type NetFault = (typeof NET_FAULTS)[number];
export const POLL_FAULTS = [
  "ok",
  "stale",
  "slow",
  "failing",
  "429",
  "regress",
  "not-found",
  "bad-time",
] as const;
export type PollFault = (typeof POLL_FAULTS)[number];
export const RECEIVER_FAULTS = ["ok", "5xx", "timeout-after-apply", "429", "slow"] as const;
export type ReceiverFault = (typeof RECEIVER_FAULTS)[number];
export const BROKER_FAULTS = ["ok", "down", "ack-dropped", "duplicate-publish"] as const;
export type BrokerFault = (typeof BROKER_FAULTS)[number];
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
  | { kind: "cancel-run"; pick: number }
  /** A retention pass whose settled-jobs window is `windowMs` (simulated time). */
  | { kind: "retention"; windowMs: number }
  /** A late webhook, a replay or a redelivery for a job (pruned or not), chosen by `pick`. */
  | { kind: "late-webhook"; pick: number; how: "replay" | "late-running" | "late-terminal" }
  /** A webhook whose `updateTime` is at or beyond the accepted bounds. */
  | { kind: "bad-time"; pick: number; at: "min" | "max" | "below" | "above" | "huge" }
  /** A worker's long-poll claim whose client goes away (before, or while, the claim commits). */
  | { kind: "aborted-claim"; worker: number; during: boolean }
  /** A discovery sweep of DISCOVERY_PROVIDER; `stale`: its list pages show the provider as it was 30 s ago. */
  | { kind: "discover"; stale: boolean };

export type StepKind = Step["kind"];

export interface Schedule {
  seed: number;
  /** The dispatcher's delivery timeout and lease, drawn from their valid range (lease > timeout). */
  effectTimeoutMs: number;
  effectLeaseMs: number;
  /**
   * Whether the process's dispatcher takes the effects its ingests enqueue, claimed in their
   * transactions (DispatcherOptions.handoff): held until the next `dispatch` step, lost with the
   * process on a kill or crash, when only their leases bring them back.
   */
  effectHandoff: boolean;
  /** The configuration the process runs with, drawn from what the config check accepts (sim-config.ts). */
  config: SimConfig;
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
  "result-large",
  "result-deep",
  "time-at-bound",
  "time-out-of-bounds",
  "poll-bad-time",
  "registered-before-settled",
  "registered-after-settled",
  "parked",
  "late-kind-effect",
  "retention-pruned",
  "webhook-after-prune",
  "register-after-prune",
  "receiver-slow",
  "replica-dispatch-in-flight",
  "claim-aborted",
  "claim-aborted-mid-commit",
  "claim-withdrawn",
  "cancel-before-withdrawal",
  "end-answer-lost",
  "next-claim-stranded",
  "worker-died-before-start",
  "run-lost-before-start",
  "broker-down",
  "broker-ack-dropped",
  "broker-publish-duplicated",
  "crash-before-register",
  "webhook-type-not-subscribed",
  "list-page-stale",
  // Issue 33: what the drawn configurations bring.
  "job-unknowable",
  "parked-expired",
  "settlement-pruned",
  "late-webhook-past-retry-window",
  "progress-after-completion",
  "settled-from-list",
  "sweep-gap-past-lookback",
  "tombstone-expired",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Thrown at the store boundary when the simulated process has crashed. */
export class SimCrash extends Error {
  override readonly name = "SimCrash";
}
