import fc from "fast-check";
import type { CanonicalState } from "../../../src/core/states.js";
import type { AnswerSource, DrawnAnswer } from "./drawn-answer.js";
import { count, objectOf, rfc3339, unknownStatus } from "./schema-times.js";

// From Anthropic's published OpenAPI document (anthropic.yaml: `MessageBatch`, `RequestCounts`)
// and the Message Batches guide: `ended` means every request has succeeded, errored, been
// canceled or expired; a batch whose cancel was initiated ends as cancelled, one whose every
// request expired as expired, any other as succeeded (its per-request outcomes are in the results).

const STATUSES = ["in_progress", "canceling", "ended"];

const requestCounts = fc.record({
  processing: count,
  succeeded: count,
  errored: count,
  canceled: count,
  expired: count,
});

function messageBatch(id: string, status: string) {
  return fc
    .record({
      request_counts: requestCounts,
      ended_at: fc.oneof(fc.constant(null), rfc3339),
      created_at: rfc3339,
      expires_at: rfc3339,
      archived_at: fc.oneof(fc.constant(null), rfc3339),
      cancel_initiated_at: fc.oneof(fc.constant(null), rfc3339),
      results_url: fc.oneof(
        fc.constant(null),
        fc.constant(`https://api.anthropic.com/v1/messages/batches/${id}/results`),
      ),
    })
    .map((fields) => objectOf({ id, type: "message_batch", processing_status: status, ...fields }));
}

/** What an ended batch means, per the guide. */
function endedAs(batch: Record<string, unknown>): CanonicalState {
  if (batch.cancel_initiated_at !== null) return "cancelled";
  const counts = batch.request_counts as { [K in "succeeded" | "errored" | "canceled" | "expired"]: number };
  const finished = counts.succeeded + counts.errored + counts.canceled;
  return counts.expired > 0 && finished === 0 ? "expired" : "succeeded";
}

const answer = (body: Record<string, unknown>, expected: CanonicalState | null): DrawnAnswer => ({
  body,
  expected,
});

/** `GET /v1/messages/batches/{id}` answers (`msgbatch_` ids). */
export const anthropicBatches: AnswerSource = {
  open: (id) =>
    fc.oneof(
      fc
        .constantFrom("in_progress", "canceling")
        .chain((status) => messageBatch(id, status).map((body) => answer(body, "running"))),
      unknownStatus(STATUSES).chain((status) => messageBatch(id, status).map((body) => answer(body, null))),
    ),
  ended: (id) => messageBatch(id, "ended").map((body) => answer(body, endedAs(body))),
};
