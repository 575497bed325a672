import { FinalityError } from "../../core/errors.js";
import type { Effect, EffectStatus, IgnoreReason, Job, JobEvent } from "../../core/model.js";
import type { CanonicalState, Source } from "../../core/states.js";

/**
 * Column names in SQL are snake_case; this file is the only place that converts them.
 * The port speaks epoch milliseconds; the time columns are timestamptz (except
 * max_update_time, the provider's ordering key: double precision ms), which postgres.js reads and
 * writes as `Date`. bigint columns arrive as numbers (see the `int8` type in postgres-client.ts),
 * jsonb columns arrive parsed.
 */
export interface JobRow {
  job_no: number;
  provider: string;
  id: string;
  kind: string | null;
  state: string;
  version: number;
  max_seq: number | null;
  max_update_time: number | null;
  submitted_at: Date;
  updated_at: Date;
  settled_at: Date | null;
  settled_by: string | null;
  registered: boolean;
  poll_attempts: number;
  next_check_at: Date | null;
  stuck: boolean;
  conflict: boolean;
  anomaly: string | null;
  last_poll_error: unknown;
  metadata: unknown;
  result: unknown;
  error: unknown;
}

export function toTime(ms: number): Date;
export function toTime(ms: number | null): Date | null;
export function toTime(ms: number | null): Date | null {
  if (ms === null) return null;
  const date = new Date(ms);
  // Out of Date's range (±8.64e15 ms) would surface as a raw RangeError from the driver.
  if (Number.isNaN(date.getTime())) {
    throw new FinalityError("internal", `time ${ms} is not a storable epoch-milliseconds value`, {
      details: { ms },
    });
  }
  return date;
}

export function fromTime(date: Date): number;
export function fromTime(date: Date | null): number | null;
export function fromTime(date: Date | null): number | null {
  return date === null ? null : date.getTime();
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
    submittedAt: fromTime(row.submitted_at),
    updatedAt: fromTime(row.updated_at),
    settledAt: fromTime(row.settled_at),
    settledBy: row.settled_by as Source | null,
    registered: row.registered,
    pollAttempts: row.poll_attempts,
    nextCheckAt: fromTime(row.next_check_at),
    stuck: row.stuck,
    conflict: row.conflict,
    anomaly: row.anomaly,
    lastPollError: (row.last_poll_error ?? null) as Job["lastPollError"],
    metadata: row.metadata ?? null,
    result: row.result ?? null,
    error: row.error ?? null,
  };
}

/** Column values for the job statements, in JOB_COLUMNS order. */
export function jobValues(job: Job): unknown[] {
  return [
    job.provider,
    job.id,
    job.kind,
    job.state,
    job.version,
    job.maxSeq,
    job.maxUpdateTime,
    toTime(job.submittedAt),
    toTime(job.updatedAt),
    toTime(job.settledAt),
    job.settledBy,
    job.registered,
    job.pollAttempts,
    toTime(job.nextCheckAt),
    job.stuck,
    job.conflict,
    job.anomaly,
    jsonValue(job.lastPollError),
    jsonValue(job.metadata),
    jsonValue(job.result),
    jsonValue(job.error),
  ];
}

export const JOB_COLUMNS = [
  "provider",
  "id",
  "kind",
  "state",
  "version",
  "max_seq",
  "max_update_time",
  "submitted_at",
  "updated_at",
  "settled_at",
  "settled_by",
  "registered",
  "poll_attempts",
  "next_check_at",
  "stuck",
  "conflict",
  "anomaly",
  "last_poll_error",
  "metadata",
  "result",
  "error",
] as const;

export interface EventRow {
  event_no: number;
  provider: string;
  job_id: string;
  source: string;
  raw_state: string | null;
  state: string;
  applied: boolean;
  reason: string | null;
  delivery_id: string | null;
  dedupe_key: string | null;
  at: Date;
  detail: unknown;
}

export function eventFromRow(row: EventRow): JobEvent {
  return {
    seqNo: row.event_no,
    provider: row.provider,
    id: row.job_id,
    source: row.source as Source,
    rawState: row.raw_state,
    state: row.state,
    applied: row.applied,
    reason: row.reason as IgnoreReason | null,
    deliveryId: row.delivery_id,
    dedupeKey: row.dedupe_key,
    at: fromTime(row.at),
    detail: row.detail ?? null,
  };
}

export const EVENT_COLUMNS = [
  "provider",
  "job_id",
  "source",
  "raw_state",
  "state",
  "applied",
  "reason",
  "delivery_id",
  "dedupe_key",
  "at",
  "detail",
] as const;

export function eventValues(event: Omit<JobEvent, "seqNo">): unknown[] {
  return [
    event.provider,
    event.id,
    event.source,
    event.rawState,
    event.state,
    event.applied,
    event.reason,
    event.deliveryId,
    event.dedupeKey,
    toTime(event.at),
    jsonValue(event.detail),
  ];
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
  next_attempt_at: Date;
  lease_until: Date | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
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
    nextAttemptAt: fromTime(row.next_attempt_at),
    leaseUntil: fromTime(row.lease_until),
    lastError: row.last_error,
    createdAt: fromTime(row.created_at),
    deliveredAt: fromTime(row.delivered_at),
  };
}

export const EFFECT_COLUMNS = [
  "id",
  "provider",
  "job_id",
  "name",
  "idempotency_key",
  "trigger",
  "status",
  "attempts",
  "next_attempt_at",
  "lease_until",
  "last_error",
  "created_at",
  "delivered_at",
] as const;

export function effectValues(effect: Effect): unknown[] {
  return [
    effect.id,
    effect.provider,
    effect.jobId,
    effect.name,
    effect.idempotencyKey,
    effect.trigger,
    effect.status,
    effect.attempts,
    toTime(effect.nextAttemptAt),
    toTime(effect.leaseUntil),
    effect.lastError,
    toTime(effect.createdAt),
    toTime(effect.deliveredAt),
  ];
}

/**
 * A jsonb parameter, sent as JSON text that the statement casts (`$n::text::jsonb`, see `param`).
 * Sent as a value instead, postgres.js would type `true` or `[false]` as boolean and PostgreSQL
 * would refuse it for a jsonb column. undefined and null become SQL NULL, as on SQLite.
 */
export function jsonValue(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const text = JSON.stringify(value);
  // jsonb holds neither NUL nor half a surrogate pair: both become U+FFFD (rare; checked cheaply).
  return UNSTORABLE_ESCAPE.test(text) ? JSON.stringify(storable(value)) : text;
}

const UNSTORABLE_ESCAPE = /\\u0000|\\ud[89a-f][0-9a-f]{2}/i;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding NUL is the point.
const UNSTORABLE_CHARS = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function storable(value: unknown): unknown {
  if (typeof value === "string") return value.replace(UNSTORABLE_CHARS, "\ufffd");
  if (Array.isArray(value)) return value.map(storable);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [storable(key), storable(item)]));
  return value;
}

/** The jsonb columns of every table. */
const JSON_COLUMNS = new Set([
  "last_poll_error",
  "metadata",
  "result",
  "error",
  "detail",
  "input",
  "output",
  "progress",
]);

/** `$i`, cast from text for a jsonb column (see `jsonValue`). */
function param(column: string, i: number): string {
  return JSON_COLUMNS.has(column) ? `$${i}::text::jsonb` : `$${i}`;
}

/** `$1, $2, ...` for a column list. */
export function placeholders(columns: readonly string[]): string {
  return columns.map((column, i) => param(column, i + 1)).join(", ");
}

/** `a = $1, b = $2, ...` for an UPDATE. */
export function assignments(columns: readonly string[]): string {
  return columns.map((column, i) => `${column} = ${param(column, i + 1)}`).join(", ");
}
