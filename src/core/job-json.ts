import type { Effect, Job, JobEvent } from "./model.js";
import { redactUrlsIn } from "./url-redaction.js";

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The public JSON shape of a job (API answers and effect payloads): ISO-8601 times. */
export function jobToJson(job: Job) {
  return {
    provider: job.provider,
    id: job.id,
    kind: job.kind,
    state: job.state,
    version: job.version,
    submittedAt: iso(job.submittedAt),
    updatedAt: iso(job.updatedAt),
    settledAt: iso(job.settledAt),
    settledBy: job.settledBy,
    registered: job.registered,
    pollAttempts: job.pollAttempts,
    lastPolledAt: iso(job.lastPolledAt),
    nextCheckAt: iso(job.nextCheckAt),
    stuck: job.stuck,
    conflict: job.conflict,
    anomaly: job.anomaly,
    lastPollError:
      job.lastPollError === null ? null : { ...job.lastPollError, at: iso(job.lastPollError.at) },
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
    at: iso(event.at),
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
    nextAttemptAt: iso(effect.nextAttemptAt),
    // Written redacted; redacted again for rows stored before that (a URL may hold a credential).
    lastError: effect.lastError === null ? null : redactUrlsIn(effect.lastError),
    createdAt: iso(effect.createdAt),
    deliveredAt: iso(effect.deliveredAt),
  };
}
