import type {
  Attempt,
  AttemptStatus,
  NewRunEvent,
  Run,
  RunActor,
  RunEvent,
  RunStatus,
} from "../../core/run-model.js";
import { fromTime, jsonValue, toTime } from "./postgres-rows.js";

/** Runs, attempts and run events: snake_case columns ↔ the run model (see postgres-rows.ts). */
export interface RunRow {
  run_no: number;
  id: string;
  kind: string;
  status: string;
  version: number;
  input: unknown;
  output: unknown;
  error: unknown;
  idempotency_key: string | null;
  max_attempts: number;
  attempt_count: number;
  generation: number;
  current_attempt_id: string | null;
  cancel_requested: boolean;
  available_at: Date;
  created_at: Date;
  updated_at: Date;
  settled_at: Date | null;
}

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

export function runFromRow(row: RunRow): Run {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status as RunStatus,
    version: row.version,
    input: row.input ?? null,
    output: row.output ?? null,
    error: row.error ?? null,
    idempotencyKey: row.idempotency_key,
    maxAttempts: row.max_attempts,
    attemptCount: row.attempt_count,
    generation: row.generation,
    currentAttemptId: row.current_attempt_id,
    cancelRequested: row.cancel_requested,
    availableAt: fromTime(row.available_at),
    createdAt: fromTime(row.created_at),
    updatedAt: fromTime(row.updated_at),
    settledAt: fromTime(row.settled_at),
  };
}

export function runValues(run: Run): unknown[] {
  return [
    run.id,
    run.kind,
    run.status,
    run.version,
    jsonValue(run.input),
    jsonValue(run.output),
    jsonValue(run.error),
    run.idempotencyKey,
    run.maxAttempts,
    run.attemptCount,
    run.generation,
    run.currentAttemptId,
    run.cancelRequested,
    toTime(run.availableAt),
    toTime(run.createdAt),
    toTime(run.updatedAt),
    toTime(run.settledAt),
  ];
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
  lease_expires_at: Date | null;
  version: number;
  output: unknown;
  error: unknown;
  progress: unknown;
  claimed_at: Date;
  started_at: Date | null;
  heartbeat_at: Date | null;
  ended_at: Date | null;
  updated_at: Date;
}

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

export function attemptFromRow(row: AttemptRow): Attempt {
  return {
    id: row.id,
    runId: row.run_id,
    workerId: row.worker_id,
    generation: row.generation,
    status: row.status as AttemptStatus,
    lastSequence: row.last_sequence,
    leaseMs: row.lease_ms,
    leaseExpiresAt: fromTime(row.lease_expires_at),
    version: row.version,
    output: row.output ?? null,
    error: row.error ?? null,
    progress: row.progress ?? null,
    claimedAt: fromTime(row.claimed_at),
    startedAt: fromTime(row.started_at),
    heartbeatAt: fromTime(row.heartbeat_at),
    endedAt: fromTime(row.ended_at),
    updatedAt: fromTime(row.updated_at),
  };
}

export function attemptValues(attempt: Attempt): unknown[] {
  return [
    attempt.id,
    attempt.runId,
    attempt.workerId,
    attempt.generation,
    attempt.status,
    attempt.lastSequence,
    attempt.leaseMs,
    toTime(attempt.leaseExpiresAt),
    attempt.version,
    jsonValue(attempt.output),
    jsonValue(attempt.error),
    jsonValue(attempt.progress),
    toTime(attempt.claimedAt),
    toTime(attempt.startedAt),
    toTime(attempt.heartbeatAt),
    toTime(attempt.endedAt),
    toTime(attempt.updatedAt),
  ];
}

export interface RunEventRow {
  event_no: number;
  dedupe_key: string;
  run_id: string;
  attempt_id: string | null;
  actor: string;
  type: string;
  at: Date;
  detail: unknown;
}

export const RUN_EVENT_COLUMNS = [
  "dedupe_key",
  "run_id",
  "attempt_id",
  "actor",
  "type",
  "at",
  "detail",
] as const;

export function runEventFromRow(row: RunEventRow): RunEvent {
  return {
    seqNo: row.event_no,
    dedupeKey: row.dedupe_key,
    runId: row.run_id,
    attemptId: row.attempt_id,
    actor: row.actor as RunActor,
    type: row.type,
    at: fromTime(row.at),
    detail: row.detail ?? null,
  };
}

export function runEventValues(event: NewRunEvent): unknown[] {
  return [
    event.dedupeKey,
    event.runId,
    event.attemptId,
    event.actor,
    event.type,
    toTime(event.at),
    jsonValue(event.detail),
  ];
}
