import type { Attempt, Run } from "../../src/core/run-model.js";

/** A run record with defaults, for pure tests. */
export function runFixture(overrides: Partial<Run> = {}): Run {
  return {
    id: "run-1",
    kind: "render",
    status: "running",
    version: 3,
    input: null,
    output: null,
    error: null,
    idempotencyKey: null,
    maxAttempts: 3,
    attemptCount: 1,
    generation: 1,
    currentAttemptId: "attempt-1",
    cancelRequested: false,
    availableAt: 0,
    createdAt: 0,
    updatedAt: 0,
    settledAt: null,
    ...overrides,
  };
}

/** An attempt record with defaults, for pure tests. */
export function attemptFixture(overrides: Partial<Attempt> = {}): Attempt {
  return {
    id: "attempt-1",
    runId: "run-1",
    workerId: "worker-a",
    generation: 1,
    status: "running",
    lastSequence: 1,
    leaseMs: 30_000,
    leaseExpiresAt: 30_000,
    version: 2,
    output: null,
    error: null,
    progress: null,
    claimedAt: 0,
    startedAt: 0,
    heartbeatAt: null,
    endedAt: null,
    updatedAt: 0,
    ...overrides,
  };
}
