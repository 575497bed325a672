import * as z from "zod";
import { ATTACHED_BY, INTENT_STATUSES } from "../core/intent-model.js";
import { apiSchemas, iso, isoOrNull, jobSchema, json, namedObject } from "./api-schemas.js";

/**
 * The answers of the intents API: what `intentToJson` (core/intent-model.ts) produces. Like
 * api-schemas.ts, they describe the API and check real answers in the tests; strict, so that a
 * field added to `intentToJson` and not here fails those tests.
 */

export const intentAnswerSchema = namedObject("Intent", "A submission intent", {
  key: z.string(),
  provider: z.string(),
  status: z.enum(INTENT_STATUSES),
  jobId: z.string().optional().describe("the remote id, once attached"),
  kind: z.string().nullable(),
  metadata: json,
  tag: z.string().describe("what to ask the provider to carry, so that a sweep can match the job back"),
  idempotencyKey: z
    .string()
    .describe("for providers that take one: a retried submission makes no second job"),
  createdAt: iso,
  deadlineAt: iso.describe("open past it, the intent is flagged orphaned"),
  attachedAt: isoOrNull,
  attachedBy: z.enum(ATTACHED_BY).nullable(),
  orphanedAt: isoOrNull.describe("set once, when the orphaned alert went out; kept after a late attach"),
});

export const attachedIntentSchema = intentAnswerSchema
  .extend({ job: jobSchema })
  .register(apiSchemas, { id: "AttachedIntent", description: "An intent and the job its attach registered" });

export const intentListSchema = z.strictObject({ items: z.array(intentAnswerSchema) });

export type Intent = z.output<typeof intentAnswerSchema>;
export type AttachedIntent = z.output<typeof attachedIntentSchema>;
