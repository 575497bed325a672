import { isoOrNull } from "./iso-time.js";
import type { Effect, Job, JobEvent } from "./model.js";
import { redactUrlsIn } from "./url-redaction.js";

/** The public JSON shape of a job (API answers and effect payloads): ISO-8601 times. */
export function jobToJson(job: Job) {
  return {
    provider: job.provider,
    id: job.id,
    kind: job.kind,
    state: job.state,
    version: job.version,
    submittedAt: isoOrNull(job.submittedAt),
    updatedAt: isoOrNull(job.updatedAt),
    settledAt: isoOrNull(job.settledAt),
    settledBy: job.settledBy,
    registered: job.registered,
    pollAttempts: job.pollAttempts,
    lastPolledAt: isoOrNull(job.lastPolledAt),
    nextCheckAt: isoOrNull(job.nextCheckAt),
    stuck: job.stuck,
    conflict: job.conflict,
    anomaly: job.anomaly,
    lastPollError:
      job.lastPollError === null ? null : { ...job.lastPollError, at: isoOrNull(job.lastPollError.at) },
    metadata: job.metadata,
    result: job.result,
    error: job.error,
  };
}

export function eventToJson(event: JobEvent) {
  return {
    seqNo: event.seqNo,
    provider: event.provider,
    id: event.id,
    source: event.source,
    rawState: event.rawState,
    state: event.state,
    applied: event.applied,
    reason: event.reason,
    deliveryId: event.deliveryId,
    at: isoOrNull(event.at),
    detail: event.detail,
  };
}

export function effectToJson(effect: Effect) {
  return {
    id: effect.id,
    provider: effect.provider,
    jobId: effect.jobId,
    name: effect.name,
    trigger: effect.trigger,
    idempotencyKey: effect.idempotencyKey,
    status: effect.status,
    attempts: effect.attempts,
    nextAttemptAt: isoOrNull(effect.nextAttemptAt),
    // Written redacted; redacted again for rows stored before that (a URL may hold a credential).
    lastError: effect.lastError === null ? null : redactUrlsIn(effect.lastError),
    createdAt: isoOrNull(effect.createdAt),
    deliveredAt: isoOrNull(effect.deliveredAt),
  };
}
