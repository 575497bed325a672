import type {
  Attempt,
  AttemptStatus,
  NewRunEvent,
  Run,
  RunActor,
  RunEvent,
  RunStatus,
} from "../../core/run-model.js";
import { fromJsonColumn, toJsonColumn } from "../json-column.js";

/** snake_case rows of the runs tables and their conversion; the only place that knows both. */

export const RUN_COLUMNS = [
  "id",
  "kind",
  "status",
  "version",
  "input",
  "output",
  "error",
  "idempotency_key",
  "max_attempts",
  "attempt_count",
  "generation",
  "current_attempt_id",
  "cancel_requested",
  "available_at",
  "created_at",
  "updated_at",
  "settled_at",
] as const;

export const ATTEMPT_COLUMNS = [
  "id",
  "run_id",
  "worker_id",
  "generation",
  "status",
  "last_sequence",
  "lease_ms",
  "lease_expires_at",
  "version",
  "output",
  "error",
  "progress",
  "claimed_at",
  "started_at",
  "heartbeat_at",
  "ended_at",
  "updated_at",
] as const;

export const RUN_EVENT_COLUMNS = [
  "dedupe_key",
  "run_id",
  "attempt_id",
  "actor",
  "type",
  "at",
  "detail",
] as const;

export interface RunRow {
  run_no: number;
  id: string;
  kind: string;
  status: string;
  version: number;
  input: string | null;
  output: string | null;
  error: string | null;
  idempotency_key: string | null;
  max_attempts: number;
  attempt_count: number;
  generation: number;
  current_attempt_id: string | null;
  cancel_requested: number;
  available_at: number;
  created_at: number;
  updated_at: number;
  settled_at: number | null;
}

export function runFromRow(row: RunRow): Run {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status as RunStatus,
    version: row.version,
    input: fromJsonColumn(row.input),
    output: fromJsonColumn(row.output),
    error: fromJsonColumn(row.error),
    idempotencyKey: row.idempotency_key,
    maxAttempts: row.max_attempts,
    attemptCount: row.attempt_count,
    generation: row.generation,
    currentAttemptId: row.current_attempt_id,
    cancelRequested: row.cancel_requested === 1,
    availableAt: row.available_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    settledAt: row.settled_at,
  };
}

export function runParams(run: Run): Record<(typeof RUN_COLUMNS)[number], unknown> {
  return {
    id: run.id,
    kind: run.kind,
    status: run.status,
    version: run.version,
    input: toJsonColumn(run.input),
    output: toJsonColumn(run.output),
    error: toJsonColumn(run.error),
    idempotency_key: run.idempotencyKey,
    max_attempts: run.maxAttempts,
    attempt_count: run.attemptCount,
    generation: run.generation,
    current_attempt_id: run.currentAttemptId,
    cancel_requested: run.cancelRequested ? 1 : 0,
    available_at: run.availableAt,
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    settled_at: run.settledAt,
  };
}

export interface AttemptRow {
  attempt_no: number;
  id: string;
  run_id: string;
  worker_id: string;
  generation: number;
  status: string;
  last_sequence: number | null;
  lease_ms: number;
  lease_expires_at: number | null;
  version: number;
  output: string | null;
  error: string | null;
  progress: string | null;
  claimed_at: number;
  started_at: number | null;
  heartbeat_at: number | null;
  ended_at: number | null;
  updated_at: number;
}

export function attemptFromRow(row: AttemptRow): Attempt {
  return {
    id: row.id,
    runId: row.run_id,
    workerId: row.worker_id,
    generation: row.generation,
    status: row.status as AttemptStatus,
    lastSequence: row.last_sequence,
    leaseMs: row.lease_ms,
    leaseExpiresAt: row.lease_expires_at,
    version: row.version,
    output: fromJsonColumn(row.output),
    error: fromJsonColumn(row.error),
    progress: fromJsonColumn(row.progress),
    claimedAt: row.claimed_at,
    startedAt: row.started_at,
    heartbeatAt: row.heartbeat_at,
    endedAt: row.ended_at,
    updatedAt: row.updated_at,
  };
}

export function attemptParams(attempt: Attempt): Record<(typeof ATTEMPT_COLUMNS)[number], unknown> {
  return {
    id: attempt.id,
    run_id: attempt.runId,
    worker_id: attempt.workerId,
    generation: attempt.generation,
    status: attempt.status,
    last_sequence: attempt.lastSequence,
    lease_ms: attempt.leaseMs,
    lease_expires_at: attempt.leaseExpiresAt,
    version: attempt.version,
    output: toJsonColumn(attempt.output),
    error: toJsonColumn(attempt.error),
    progress: toJsonColumn(attempt.progress),
    claimed_at: attempt.claimedAt,
    started_at: attempt.startedAt,
    heartbeat_at: attempt.heartbeatAt,
    ended_at: attempt.endedAt,
    updated_at: attempt.updatedAt,
  };
}

export interface RunEventRow {
  event_no: number;
  dedupe_key: string;
  run_id: string;
  attempt_id: string | null;
  actor: string;
  type: string;
  at: number;
  detail: string | null;
}

export function runEventFromRow(row: RunEventRow): RunEvent {
  return {
    seqNo: row.event_no,
    dedupeKey: row.dedupe_key,
    runId: row.run_id,
    attemptId: row.attempt_id,
    actor: row.actor as RunActor,
    type: row.type,
    at: row.at,
    detail: fromJsonColumn(row.detail),
  };
}

export function runEventParams(event: NewRunEvent): Record<(typeof RUN_EVENT_COLUMNS)[number], unknown> {
  return {
    dedupe_key: event.dedupeKey,
    run_id: event.runId,
    attempt_id: event.attemptId,
    actor: event.actor,
    type: event.type,
    at: event.at,
    detail: toJsonColumn(event.detail),
  };
}
