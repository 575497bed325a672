import type { Effect, Job, JobEvent } from "../../src/core/model.js";
import type { CanonicalState } from "../../src/core/states.js";
import { isTerminal } from "../../src/core/states.js";

export const T0 = Date.UTC(2026, 0, 1);

/** A stored job with plausible defaults; settled fields follow the state unless overridden. */
export function makeJob(overrides: Partial<Job> & { id: string }): Job {
  const state: CanonicalState = overrides.state ?? "pending";
  const settled = isTerminal(state);
  return {
    provider: "generic",
    kind: null,
    state,
    version: 1,
    maxSeq: null,
    maxUpdateTime: null,
    submittedAt: T0,
    updatedAt: T0,
    settledAt: settled ? T0 : null,
    settledBy: settled ? "webhook" : null,
    registered: true,
    pollAttempts: 0,
    lastPolledAt: null,
    nextCheckAt: settled ? null : T0 + 90_000,
    stuck: false,
    conflict: false,
    anomaly: null,
    lastPollError: null,
    metadata: null,
    result: null,
    error: null,
    ...overrides,
  };
}

export function makeEvent(
  overrides: Partial<Omit<JobEvent, "seqNo">> & { id: string },
): Omit<JobEvent, "seqNo"> {
  return {
    provider: "generic",
    source: "webhook",
    rawState: null,
    state: "running",
    applied: true,
    reason: null,
    deliveryId: null,
    dedupeKey: null,
    at: T0,
    detail: null,
    ...overrides,
  };
}

let effectCounter = 0;

export function makeEffect(overrides: Partial<Effect> & { jobId: string }): Effect {
  effectCounter += 1;
  const id = overrides.id ?? `eff-${effectCounter}-${overrides.jobId}`;
  return {
    id,
    provider: "generic",
    name: "notify",
    idempotencyKey: `fin_${id}`,
    trigger: "succeeded",
    status: "pending",
    attempts: 0,
    nextAttemptAt: T0,
    leaseUntil: null,
    lastError: null,
    createdAt: T0,
    deliveredAt: null,
    traceParent: null,
    ...overrides,
  };
}
