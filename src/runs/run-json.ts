import { isoOrNull } from "../core/iso-time.js";
import type { Attempt, Run, RunEvent } from "../core/run-model.js";

/** The public JSON shape of a run: ISO-8601 times. */
export function runToJson(run: Run) {
  return {
    id: run.id,
    kind: run.kind,
    status: run.status,
    version: run.version,
    input: run.input,
    output: run.output,
    error: run.error,
    idempotencyKey: run.idempotencyKey,
    maxAttempts: run.maxAttempts,
    attemptCount: run.attemptCount,
    generation: run.generation,
    currentAttemptId: run.currentAttemptId,
    cancelRequested: run.cancelRequested,
    availableAt: isoOrNull(run.availableAt),
    createdAt: isoOrNull(run.createdAt),
    updatedAt: isoOrNull(run.updatedAt),
    settledAt: isoOrNull(run.settledAt),
  };
}

function attemptToJson(attempt: Attempt) {
  return {
    id: attempt.id,
    runId: attempt.runId,
    workerId: attempt.workerId,
    generation: attempt.generation,
    status: attempt.status,
    lastSequence: attempt.lastSequence,
    leaseExpiresAt: isoOrNull(attempt.leaseExpiresAt),
    error: attempt.error,
    output: attempt.output,
    progress: attempt.progress,
    claimedAt: isoOrNull(attempt.claimedAt),
    startedAt: isoOrNull(attempt.startedAt),
    heartbeatAt: isoOrNull(attempt.heartbeatAt),
    endedAt: isoOrNull(attempt.endedAt),
  };
}

export function runWithAttemptsToJson(run: Run, attempts: readonly Attempt[]) {
  return { ...runToJson(run), attempts: attempts.map(attemptToJson) };
}

/** What a claim answers: the run and the lease the worker must present on every call. */
export function claimToJson(run: Run, attempt: Attempt) {
  return {
    run: runToJson(run),
    attempt: {
      id: attempt.id,
      generation: attempt.generation,
      leaseExpiresAt: isoOrNull(attempt.leaseExpiresAt),
      leaseSeconds: attempt.leaseMs / 1000,
    },
  };
}

export function runEventToJson(event: RunEvent) {
  return {
    seqNo: event.seqNo,
    runId: event.runId,
    attemptId: event.attemptId,
    actor: event.actor,
    type: event.type,
    at: isoOrNull(event.at),
    detail: event.detail,
  };
}
