import * as z from "zod";
import { SOURCES, TERMINAL_STATES } from "../core/states.js";
import { apiSchemas, iso, jobSchema } from "./api-schemas.js";

/**
 * The settlement feed's answers as zod schemas: what `settlementToJson` (engine/settlement-stream.ts)
 * and the page of settlement-routes.ts produce. Strict, as the others in api-schemas.ts, so a field
 * added to the answer and not here fails the tests instead of going undescribed.
 */

export const settlementSchema = z
  .strictObject({
    cursor: z.string().describe("opaque; pass back as `after` (or `Last-Event-ID`) to read what came after"),
    provider: z.string(),
    id: z.string(),
    kind: z
      .string()
      .nullable()
      .describe("the job's kind when it settled; on an amendment, the kind that arrived after it settled"),
    amendment: z
      .boolean()
      .describe(
        "true: not a new settlement but the kind of a job that settled without one, arriving; given only to a reader filtered by `kind`",
      ),
    state: z.enum(TERMINAL_STATES).describe("the terminal state the job settled in"),
    settledAt: iso,
    settledBy: z.enum(SOURCES).nullable(),
    job: jobSchema.nullable().describe("the job as it is now; null once retention deleted it"),
  })
  .register(apiSchemas, {
    id: "Settlement",
    description: "One job settlement (its first terminal state), in commit order",
  });

export const settlementPageSchema = z.strictObject({
  items: z.array(settlementSchema).describe("oldest first, in commit order"),
  cursor: z
    .string()
    .nullable()
    .describe("the last item's cursor, or the `after` passed when nothing newer matched (null: the start)"),
});

export type Settlement = z.output<typeof settlementSchema>;
export type SettlementPage = z.output<typeof settlementPageSchema>;
