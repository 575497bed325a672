import fc from "fast-check";
import type { CanonicalState } from "../../../src/core/states.js";
import { type AnswerSource, type DrawnAnswer, statusFrom } from "./drawn-answer.js";
import { maybe, objectOf, optional, rfc3339, someText, unknownStatus } from "./schema-times.js";

// A Replicate prediction as `GET /v1/predictions/{id}` answers it and as its webhooks carry it
// (replicate-javascript `Prediction`, the predictions lifecycle guide; `aborted`: the 2025-10-16
// changelog on prediction deadlines). Times are ISO 8601 texts; `started_at`, `completed_at` appear
// as the prediction moves on, and may be null.

const OPEN: Record<string, CanonicalState> = { starting: "pending", processing: "running" };
const ENDED: Record<string, CanonicalState> = {
  succeeded: "succeeded",
  failed: "failed",
  canceled: "cancelled",
  // Its deadline passed before it could start: nothing ran, the window closed.
  aborted: "expired",
};

function prediction(id: string, status: string) {
  return fc
    .record({
      model: fc.constantFrom("black-forest-labs/flux-schnell", "owner/model"),
      version: someText,
      output: maybe(fc.oneof(someText, fc.array(someText, { maxLength: 2 }))),
      error: fc.oneof(fc.constant(null), someText),
      logs: optional(someText),
      created_at: rfc3339,
      started_at: maybe(rfc3339),
      completed_at: maybe(rfc3339),
      data_removed: optional(fc.boolean()),
      metrics: optional(fc.record({ predict_time: optional(fc.double({ min: 0, max: 1e4, noNaN: true })) })),
    })
    .map((fields) =>
      objectOf({
        id,
        status,
        input: { prompt: "a cat" },
        urls: { get: `https://api.replicate.com/v1/predictions/${id}` },
        ...fields,
      }),
    );
}

const drawn = (id: string, table: Record<string, CanonicalState>): fc.Arbitrary<DrawnAnswer> =>
  statusFrom(table).chain(({ status, expected }) =>
    prediction(id, status).map((body) => ({ body, expected })),
  );

/** Prediction answers (polls) and bodies (webhooks). */
export const replicatePredictions: AnswerSource = {
  open: (id) =>
    fc.oneof(
      drawn(id, OPEN),
      unknownStatus([...Object.keys(OPEN), ...Object.keys(ENDED)]).chain((status) =>
        prediction(id, status).map((body) => ({ body, expected: null })),
      ),
    ),
  ended: (id) => drawn(id, ENDED),
};
