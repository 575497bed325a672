import type { Effect, EffectStatus, IgnoreReason, Job, JobEvent } from "../../core/model.js";
import type { CanonicalState, Source } from "../../core/states.js";
import { fromJsonColumn, toJsonColumn } from "../json-column.js";

/** Column names in SQL are snake_case; this file is the only place that converts them. */
export interface JobRow {
  job_no: number;
  provider: string;
  id: string;
  kind: string | null;
  state: string;
  version: number;
  max_seq: number | null;
  max_update_time: number | null;
  submitted_at: number;
  updated_at: number;
  settled_at: number | null;
  settled_by: string | null;
  registered: number;
  poll_attempts: number;
  next_check_at: number | null;
  stuck: number;
  conflict: number;
  anomaly: string | null;
  last_poll_error: string | null;
  metadata: string | null;
  result: string | null;
  error: string | null;
}

export function jobFromRow(row: JobRow): Job {
  return {
    provider: row.provider,
    id: row.id,
    kind: row.kind,
    state: row.state as CanonicalState,
    version: row.version,
    maxSeq: row.max_seq,
    maxUpdateTime: row.max_update_time,
    submittedAt: row.submitted_at,
    updatedAt: row.updated_at,
    settledAt: row.settled_at,
    settledBy: row.settled_by as Source | null,
    registered: row.registered === 1,
    pollAttempts: row.poll_attempts,
    nextCheckAt: row.next_check_at,
    stuck: row.stuck === 1,
    conflict: row.conflict === 1,
    anomaly: row.anomaly,
    lastPollError: fromJsonColumn(row.last_poll_error) as Job["lastPollError"],
    metadata: fromJsonColumn(row.metadata),
    result: fromJsonColumn(row.result),
    error: fromJsonColumn(row.error),
  };
}

/** Named parameters for the job statements. */
export function jobParams(job: Job): Record<string, unknown> {
  return {
    provider: job.provider,
    id: job.id,
    kind: job.kind,
    state: job.state,
    version: job.version,
    max_seq: job.maxSeq,
    max_update_time: job.maxUpdateTime,
    submitted_at: job.submittedAt,
    updated_at: job.updatedAt,
    settled_at: job.settledAt,
    settled_by: job.settledBy,
    registered: job.registered ? 1 : 0,
    poll_attempts: job.pollAttempts,
    next_check_at: job.nextCheckAt,
    stuck: job.stuck ? 1 : 0,
    conflict: job.conflict ? 1 : 0,
    anomaly: job.anomaly,
    last_poll_error: toJsonColumn(job.lastPollError),
    metadata: toJsonColumn(job.metadata),
    result: toJsonColumn(job.result),
    error: toJsonColumn(job.error),
  };
}

export interface EventRow {
  event_no: number;
  provider: string;
  job_id: string;
  source: string;
  raw_state: string | null;
  state: string;
  applied: number;
  reason: string | null;
  delivery_id: string | null;
  dedupe_key: string | null;
  at: number;
  detail: string | null;
}

export function eventFromRow(row: EventRow): JobEvent {
  return {
    seqNo: row.event_no,
    provider: row.provider,
    id: row.job_id,
    source: row.source as Source,
    rawState: row.raw_state,
    state: row.state,
    applied: row.applied === 1,
    reason: row.reason as IgnoreReason | null,
    deliveryId: row.delivery_id,
    dedupeKey: row.dedupe_key,
    at: row.at,
    detail: fromJsonColumn(row.detail),
  };
}

export function eventParams(event: Omit<JobEvent, "seqNo">): Record<string, unknown> {
  return {
    provider: event.provider,
    job_id: event.id,
    source: event.source,
    raw_state: event.rawState,
    state: event.state,
    applied: event.applied ? 1 : 0,
    reason: event.reason,
    delivery_id: event.deliveryId,
    dedupe_key: event.dedupeKey,
    at: event.at,
    detail: toJsonColumn(event.detail),
  };
}

export interface EffectRow {
  effect_no: number;
  id: string;
  provider: string;
  job_id: string;
  name: string;
  idempotency_key: string;
  trigger: string;
  status: string;
  attempts: number;
  next_attempt_at: number;
  lease_until: number | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

export function effectFromRow(row: EffectRow): Effect {
  return {
    id: row.id,
    provider: row.provider,
    jobId: row.job_id,
    name: row.name,
    idempotencyKey: row.idempotency_key,
    trigger: row.trigger,
    status: row.status as EffectStatus,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    leaseUntil: row.lease_until,
    lastError: row.last_error,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
  };
}

export function effectParams(effect: Effect): Record<string, unknown> {
  return {
    id: effect.id,
    provider: effect.provider,
    job_id: effect.jobId,
    name: effect.name,
    idempotency_key: effect.idempotencyKey,
    trigger: effect.trigger,
    status: effect.status,
    attempts: effect.attempts,
    next_attempt_at: effect.nextAttemptAt,
    lease_until: effect.leaseUntil,
    last_error: effect.lastError,
    created_at: effect.createdAt,
    delivered_at: effect.deliveredAt,
  };
}
