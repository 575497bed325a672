import type { Intent } from "../core/intent-model.js";
import type { Effect, Job, JobEvent } from "../core/model.js";
import type { Attempt, Run, RunEvent } from "../core/run-model.js";
import type { ParkedObservation, Tombstone } from "./lifecycle-store.js";
import { col, defineTable } from "./row-mapping.js";

/**
 * One mapping line per column of the tables the stores read into port objects: a new column is
 * a line here plus its migrations (test/store/schema-mapping.test.ts holds the two together).
 * Field order is column-list order, and the order of the objects' keys.
 */

export const JOBS = defineTable<Job>({
  table: "jobs",
  rowNumber: { column: "job_no" },
  columns: {
    // provider, id and submitted_at never change: SQLite's UPDATE leaves them (and the unique
    // key's index) alone.
    provider: col("provider", "text").setOnce(),
    id: col("id", "text").setOnce(),
    kind: col("kind", "text").orNull(),
    state: col("state", "text"),
    version: col("version", "int"),
    maxSeq: col("max_seq", "int").orNull(),
    maxUpdateTime: col("max_update_time", "real").orNull(),
    submittedAt: col("submitted_at", "time").setOnce(),
    updatedAt: col("updated_at", "time"),
    settledAt: col("settled_at", "time").orNull(),
    settledBy: col("settled_by", "text").orNull(),
    registered: col("registered", "bool"),
    pollAttempts: col("poll_attempts", "int"),
    lastPolledAt: col("last_polled_at", "time").orNull(),
    nextCheckAt: col("next_check_at", "time").orNull(),
    stuck: col("stuck", "bool"),
    conflict: col("conflict", "bool"),
    anomaly: col("anomaly", "text").orNull(),
    lastPollError: col("last_poll_error", "json").orNull(),
    metadata: col("metadata", "json").orNull(),
    result: col("result", "json").orNull(),
    error: col("error", "json").orNull(),
  },
});

export const EVENTS = defineTable<JobEvent, "seqNo">({
  table: "events",
  rowNumber: { column: "event_no", field: "seqNo" },
  columns: {
    provider: col("provider", "text"),
    id: col("job_id", "text"),
    source: col("source", "text"),
    rawState: col("raw_state", "text").orNull(),
    state: col("state", "text"),
    applied: col("applied", "bool"),
    reason: col("reason", "text").orNull(),
    deliveryId: col("delivery_id", "text").orNull(),
    dedupeKey: col("dedupe_key", "text").orNull(),
    at: col("at", "time"),
    detail: col("detail", "json").orNull(),
  },
});

export const EFFECTS = defineTable<Effect>({
  table: "outbox",
  rowNumber: { column: "effect_no" },
  columns: {
    id: col("id", "text"),
    provider: col("provider", "text"),
    jobId: col("job_id", "text"),
    name: col("name", "text"),
    idempotencyKey: col("idempotency_key", "text"),
    trigger: col("trigger", "text"),
    status: col("status", "text"),
    attempts: col("attempts", "int"),
    nextAttemptAt: col("next_attempt_at", "time"),
    leaseUntil: col("lease_until", "time").orNull(),
    lastError: col("last_error", "text").orNull(),
    createdAt: col("created_at", "time"),
    deliveredAt: col("delivered_at", "time").orNull(),
    traceParent: col("trace_parent", "text").orNull(),
  },
});

export const RUNS = defineTable<Run>({
  table: "runs",
  rowNumber: { column: "run_no" },
  columns: {
    // set once at insert: id, kind, idempotency key, input, creation time
    id: col("id", "text").setOnce(),
    kind: col("kind", "text").setOnce(),
    status: col("status", "text"),
    version: col("version", "int"),
    input: col("input", "json").orNull().setOnce(),
    output: col("output", "json").orNull(),
    error: col("error", "json").orNull(),
    idempotencyKey: col("idempotency_key", "text").orNull().setOnce(),
    maxAttempts: col("max_attempts", "int"),
    attemptCount: col("attempt_count", "int"),
    generation: col("generation", "int"),
    currentAttemptId: col("current_attempt_id", "text").orNull(),
    cancelRequested: col("cancel_requested", "bool"),
    availableAt: col("available_at", "time"),
    createdAt: col("created_at", "time").setOnce(),
    updatedAt: col("updated_at", "time"),
    settledAt: col("settled_at", "time").orNull(),
  },
});

export const ATTEMPTS = defineTable<Attempt>({
  table: "attempts",
  rowNumber: { column: "attempt_no" },
  columns: {
    // an attempt never changes its identity, run, worker, generation or claim time
    id: col("id", "text").setOnce(),
    runId: col("run_id", "text").setOnce(),
    workerId: col("worker_id", "text").setOnce(),
    generation: col("generation", "int").setOnce(),
    status: col("status", "text"),
    lastSequence: col("last_sequence", "int").orNull(),
    leaseMs: col("lease_ms", "int"),
    leaseExpiresAt: col("lease_expires_at", "time").orNull(),
    version: col("version", "int"),
    output: col("output", "json").orNull(),
    error: col("error", "json").orNull(),
    progress: col("progress", "json").orNull(),
    claimedAt: col("claimed_at", "time").setOnce(),
    startedAt: col("started_at", "time").orNull(),
    heartbeatAt: col("heartbeat_at", "time").orNull(),
    endedAt: col("ended_at", "time").orNull(),
    updatedAt: col("updated_at", "time"),
  },
});

export const RUN_EVENTS = defineTable<RunEvent, "seqNo">({
  table: "run_events",
  rowNumber: { column: "event_no", field: "seqNo" },
  columns: {
    dedupeKey: col("dedupe_key", "text"),
    runId: col("run_id", "text"),
    attemptId: col("attempt_id", "text").orNull(),
    actor: col("actor", "text"),
    type: col("type", "text"),
    at: col("at", "time"),
    detail: col("detail", "json").orNull(),
  },
});

/** Keyed by the caller's key, no row number (lists page by created_at, key). */
export const INTENTS = defineTable<Intent>({
  table: "intents",
  columns: {
    // set once when recorded: the key, provider, idempotency key, creation time and deadline
    key: col("key", "text").setOnce(),
    provider: col("provider", "text").setOnce(),
    kind: col("kind", "text").orNull(),
    metadata: col("metadata", "json").orNull(),
    idempotencyKey: col("idempotency_key", "text").setOnce(),
    createdAt: col("created_at", "time").setOnce(),
    deadlineAt: col("deadline_at", "time").setOnce(),
    jobId: col("job_id", "text").orNull(),
    attachedAt: col("attached_at", "time").orNull(),
    attachedBy: col("attached_by", "text").orNull(),
    orphanedAt: col("orphaned_at", "time").orNull(),
  },
});

/** Keyed by the job, no row number: retention writes them from the jobs it deletes, in SQL. */
export const TOMBSTONES = defineTable<Tombstone>({
  table: "tombstones",
  columns: {
    provider: col("provider", "text"),
    id: col("id", "text"),
    state: col("state", "text"),
    settledAt: col("settled_at", "time"),
    effectsHash: col("effects_hash", "text"),
  },
});

export const PARKED = defineTable<ParkedObservation, "parkedNo">({
  table: "parked",
  rowNumber: { column: "parked_no", field: "parkedNo" },
  columns: {
    provider: col("provider", "text"),
    id: col("job_id", "text"),
    deliveryId: col("delivery_id", "text").orNull(),
    parkedAt: col("parked_at", "time"),
    observation: col("observation", "json"),
  },
});

/** Every mapped table, for the schema test. */
export const MAPPED_TABLES = [
  JOBS,
  EVENTS,
  EFFECTS,
  RUNS,
  ATTEMPTS,
  RUN_EVENTS,
  INTENTS,
  TOMBSTONES,
  PARKED,
] as const;

/** A row as the driver returns it: columns by name, the row number among them (cursors page by it). */
export type Row = Record<string, unknown>;
export type JobRow = Row & { job_no: number };
export type EventRow = Row & { event_no: number };
export type EffectRow = Row & { effect_no: number };
export type RunRow = Row & { run_no: number };
export type AttemptRow = Row & { attempt_no: number };
export type RunEventRow = Row & { event_no: number };
export type ParkedRow = Row & { parked_no: number };
