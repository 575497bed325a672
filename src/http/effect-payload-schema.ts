import * as z from "zod";
import { apiSchemas, jobSchema } from "./api-schemas.js";
import { intentAnswerSchema } from "./intent-api-schemas.js";

/**
 * What an effect receives (engine/effect-message.ts `finalityBody`), signed the Standard Webhooks
 * way. On `intent.orphaned` (an effect with `on: ["orphaned"]`) `job` is the stand-in the alert
 * carries (the intent's key as its id, its provider, kind and metadata) and `intent` is the intent.
 */
export const effectPayloadSchema = z
  .strictObject({
    type: z.enum(["job.settled", "job.stuck", "intent.orphaned"]),
    effect: z.string().describe("the effect's name"),
    idempotencyKey: z.string().describe("also the `webhook-id` header: the same on every attempt"),
    attempt: z.number().int().positive(),
    job: jobSchema.describe("the job; on `intent.orphaned`, a stand-in keyed by the intent's key"),
    intent: intentAnswerSchema
      .optional()
      .describe("only on `intent.orphaned`: the intent, still without a remote id"),
  })
  .register(apiSchemas, { id: "EffectPayload", description: "The body of an effect delivery" });

export type EffectPayload = z.output<typeof effectPayloadSchema>;
