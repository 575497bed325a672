import * as z from "zod";
import { ERROR_CODES, type ErrorCode } from "../core/errors.js";
import { IGNORE_REASONS } from "../core/model.js";
import { CANONICAL_STATES, SOURCES, TERMINAL_STATES } from "../core/states.js";
import { DESTINATION_KINDS } from "../engine/effect-target.js";

/**
 * The answers of the jobs, effects and parked API as zod schemas: what `jobToJson`,
 * `effectToJson`, ... produce. They are never run on the hot path; they describe the API
 * (/openapi.json), type the client (`finality/client`, through `z.output`) and check real
 * answers in the tests. Strict objects, so that a field added to an answer and not here fails
 * those tests instead of going undescribed.
 */

/** Named schemas: each becomes `#/components/schemas/<id>` in the document. */
export const apiSchemas = z.registry<{ id: string; description?: string }>();

/**
 * A strict object schema that the document names: `#/components/schemas/<id>`, with its
 * description. Each answer the API gives whole (a job, a run, a problem) is one.
 */
export function namedObject<S extends z.core.$ZodLooseShape>(id: string, description: string, shape: S) {
  return z.strictObject(shape).register(apiSchemas, { id, description });
}

export const iso = z.iso.datetime().describe("ISO 8601, UTC");
export const isoOrNull = iso.nullable();
/** Any JSON the caller or the provider gave; a value too large or deep is a marked stand-in. */
export const json = z.unknown().describe("any JSON value");

export const outcomeSchema = z
  .enum(["applied", ...IGNORE_REASONS])
  .describe("`applied`, or the reason the observation changed nothing");

export const pollErrorSchema = namedObject("PollError", "Why the last status poll failed", {
  at: iso,
  message: z.string(),
  url: z.string().nullable().describe("without user, password or key-like query values"),
  code: z.string().nullable().describe("the network error's code (ECONNREFUSED, ...)"),
  status: z.number().int().nullable().describe("the HTTP status the provider answered"),
});

export const jobSchema = namedObject("Job", "One remote job as the ledger knows it", {
  provider: z.string(),
  id: z.string(),
  kind: z.string().nullable(),
  state: z.enum(CANONICAL_STATES),
  version: z.number().int(),
  submittedAt: iso,
  updatedAt: iso,
  settledAt: isoOrNull,
  settledBy: z.enum(SOURCES).nullable(),
  registered: z.boolean(),
  pollAttempts: z.number().int(),
  lastPolledAt: isoOrNull.describe("when a status poll last asked the provider; null before the first"),
  nextCheckAt: isoOrNull,
  stuck: z.boolean(),
  conflict: z.boolean(),
  anomaly: z.string().nullable(),
  lastPollError: pollErrorSchema.nullable(),
  metadata: json,
  result: json,
  error: json,
});

export const jobEventSchema = namedObject("JobEvent", "One row of a job's audit trail", {
  seqNo: z.number().int(),
  provider: z.string(),
  id: z.string(),
  source: z.enum(SOURCES),
  rawState: z.string().nullable(),
  state: z.string(),
  applied: z.boolean(),
  reason: z.enum(IGNORE_REASONS).nullable(),
  deliveryId: z.string().nullable(),
  at: iso,
  detail: json,
});

export const effectSchema = namedObject("Effect", "One row of the transactional outbox", {
  id: z.string(),
  provider: z.string(),
  jobId: z.string(),
  name: z.string(),
  trigger: z.string().describe("the terminal state that triggered it, or `stuck`"),
  idempotencyKey: z.string(),
  status: z.enum(["pending", "delivering", "delivered", "dead"]),
  attempts: z.number().int(),
  nextAttemptAt: isoOrNull,
  lastError: z.string().nullable(),
  createdAt: iso,
  deliveredAt: isoOrNull,
});

export const tombstoneSchema = z
  .strictObject({ state: z.enum(TERMINAL_STATES), settledAt: iso, effectsHash: z.string() })
  .register(apiSchemas, { id: "Tombstone", description: "What is kept of a settled job that was pruned" });

export const parkedSchema = namedObject("ParkedObservation", "An observation waiting for its job", {
  parkedNo: z.number().int(),
  provider: z.string(),
  id: z.string(),
  parkedAt: iso,
  observation: z.strictObject({
    state: z.string(),
    source: z.enum(SOURCES),
    rawState: z.string().nullable(),
    seq: z.number().int().nullable(),
    updateTime: z.number().nullable().describe("epoch milliseconds"),
    deliveryId: z.string().nullable(),
    kind: z.string().nullable(),
    result: json,
    error: json,
  }),
});

const page = <T extends z.ZodType>(item: T) =>
  z.strictObject({
    items: z.array(item),
    nextCursor: z.string().nullable().describe("pass back as `cursor` for the next page; null at the end"),
  });

export const jobListSchema = page(jobSchema);
export const jobEventListSchema = z.strictObject({ items: z.array(jobEventSchema) });
export const effectListSchema = page(effectSchema);
export const effectItemsSchema = z.strictObject({ items: z.array(effectSchema) });
export const parkedListSchema = page(parkedSchema);

export const observationAnswerSchema = z.strictObject({
  outcome: outcomeSchema,
  applied: z.boolean(),
  job: jobSchema.nullable(),
});

export const webhookAnswerSchema = namedObject("WebhookAnswer", "How the ledger took a webhook", {
  outcome: outcomeSchema,
  applied: z.boolean(),
  provider: z.string(),
  jobId: z.string(),
  state: z.string().nullable(),
  version: z.number().int().nullable(),
});

/**
 * The `generic` provider's webhook body. It is parsed by hand on the hot path
 * (providers/generic/generic-webhook.ts, same rules); this schema only describes it.
 */
export const genericWebhookBodySchema = z
  .looseObject({
    jobId: z.string().min(1),
    state: z.string().min(1).describe("a canonical state; any other name is recorded as `unknown-state`"),
    seq: z.number().int().nonnegative().optional(),
    updateTime: z.iso.datetime({ offset: true }).optional(),
    kind: z.string().optional(),
    result: json.optional(),
    error: json.optional(),
  })
  .register(apiSchemas, { id: "GenericWebhook", description: "The `generic` provider's webhook body" });

const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const problemSchema = z
  .looseObject({
    type: z.string().describe("`urn:finality:problem:<code>`: switch on this (or `code`)"),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.enum(ERROR_CODE_LIST),
    retryable: z.boolean(),
    field: z.string().optional(),
    reason: z.string().optional(),
    provider: z.string().optional(),
    id: z.string().optional(),
    allow: z.string().optional(),
    retryAfterSeconds: z.number().int().optional(),
    tombstone: tombstoneSchema.optional(),
    parked: z.array(parkedSchema).optional(),
  })
  .register(apiSchemas, { id: "Problem", description: "RFC 9457 problem details" });

export const healthSchema = z.strictObject({ status: z.literal("ok") });
export const readySchema = z.strictObject({
  status: z.literal("ready"),
  /** Each broker effect's connection (only when broker effects are configured); a broker down is not unready. */
  destinations: z
    .array(
      z.strictObject({
        effect: z.string(),
        destination: z.enum(DESTINATION_KINDS),
        connected: z.boolean(),
        error: z.string().optional(),
      }),
    )
    .optional(),
});

export type Job = z.output<typeof jobSchema>;
export type JobEvent = z.output<typeof jobEventSchema>;
export type Effect = z.output<typeof effectSchema>;
export type ParkedObservation = z.output<typeof parkedSchema>;
export type Problem = z.output<typeof problemSchema>;
export type WebhookAnswer = z.output<typeof webhookAnswerSchema>;
