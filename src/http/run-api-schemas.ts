import * as z from "zod";
import { ATTEMPT_STATUSES, RUN_STATUSES } from "../core/run-model.js";
import { apiSchemas, iso, isoOrNull, json, namedObject } from "./api-schemas.js";

/**
 * The answers of the runs and worker API (runs/run-json.ts and run-routes.ts) as zod schemas,
 * for the document, the client's types and the tests; see api-schemas.ts.
 */

const runSchema = namedObject("Run", "A run on the application's own workers", {
  id: z.string(),
  kind: z.string(),
  status: z.enum(RUN_STATUSES),
  version: z.number().int(),
  input: json,
  output: json,
  error: json,
  idempotencyKey: z.string().nullable(),
  maxAttempts: z.number().int(),
  attemptCount: z.number().int(),
  generation: z.number().int().describe("fencing token of the latest attempt; only grows"),
  currentAttemptId: z.string().nullable(),
  cancelRequested: z.boolean(),
  availableAt: iso,
  createdAt: iso,
  updatedAt: iso,
  settledAt: isoOrNull,
});

const attemptSchema = namedObject("Attempt", "One try of a run by one worker", {
  id: z.string(),
  runId: z.string(),
  workerId: z.string(),
  generation: z.number().int(),
  status: z.enum(ATTEMPT_STATUSES),
  lastSequence: z.number().int().nullable(),
  leaseExpiresAt: isoOrNull,
  error: json,
  output: json,
  progress: json,
  claimedAt: iso,
  startedAt: isoOrNull,
  heartbeatAt: isoOrNull,
  endedAt: isoOrNull,
});

export const runWithAttemptsSchema = runSchema
  .extend({ attempts: z.array(attemptSchema) })
  .register(apiSchemas, { id: "RunWithAttempts", description: "A run and its attempts, oldest first" });

const runEventSchema = namedObject("RunEvent", "One row of a run's audit trail", {
  seqNo: z.number().int(),
  runId: z.string(),
  attemptId: z.string().nullable(),
  actor: z.enum(["worker", "reconciler", "api"]),
  type: z.string(),
  at: iso,
  detail: json,
});

export const runListSchema = z.strictObject({
  items: z.array(runSchema),
  nextCursor: z.string().nullable(),
});
export const runEventListSchema = z.strictObject({ items: z.array(runEventSchema) });

const leaseSchema = namedObject("Lease", "The lease a claim grants", {
  id: z.string().describe("the attempt's id"),
  generation: z.number().int().describe("present it on every call for this attempt"),
  leaseExpiresAt: isoOrNull,
  leaseSeconds: z.number(),
});

export const claimAnswerSchema = z
  .strictObject({ run: runSchema, attempt: leaseSchema })
  .register(apiSchemas, { id: "Claim", description: "A claimed run and its lease" });

export const heartbeatAnswerSchema = z.strictObject({
  attemptId: z.string(),
  generation: z.number().int(),
  status: z.enum(ATTEMPT_STATUSES),
  leaseExpiresAt: isoOrNull,
  cancelRequested: z.boolean().describe("true: stop, and report `cancelled`"),
});

export const workerEventAnswerSchema = z.strictObject({
  outcome: z.enum(["applied", "duplicate", "out_of_order"]),
  applied: z.boolean(),
  attemptId: z.string(),
  sequence: z.number().int(),
  attemptStatus: z.enum(ATTEMPT_STATUSES),
  runId: z.string(),
  runStatus: z.enum(RUN_STATUSES),
  cancelRequested: z.boolean(),
  next: claimAnswerSchema
    .nullable()
    .optional()
    .describe(
      "when the report asked for `next`: the worker's next run and its lease, or null (nothing to claim)",
    ),
});

export type Run = z.output<typeof runSchema>;
export type Attempt = z.output<typeof attemptSchema>;
export type RunWithAttempts = z.output<typeof runWithAttemptsSchema>;
export type RunEvent = z.output<typeof runEventSchema>;
export type Claim = z.output<typeof claimAnswerSchema>;
export type HeartbeatAnswer = z.output<typeof heartbeatAnswerSchema>;
export type WorkerEventAnswer = z.output<typeof workerEventAnswerSchema>;
