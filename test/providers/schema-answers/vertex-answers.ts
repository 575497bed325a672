import fc from "fast-check";
import type { CanonicalState } from "../../../src/core/states.js";
import { type AnswerSource, type DrawnAnswer, statusFrom } from "./drawn-answer.js";
import { count, objectOf, optional, rfc3339, someText, unknownStatus } from "./schema-times.js";

// A BatchPredictionJob in its JSON form (REST reference, projects.locations.batchPredictionJobs):
// `name`, `displayName`, `model`, `state` (JobState; left out at its default, UNSPECIFIED, as proto3
// JSON does), google.protobuf.Timestamp times (RFC 3339, up to nanoseconds), `completionStats`
// with int64 counts as texts, `error` a google.rpc.Status. Meanings from the JobState reference.

const OPEN: Record<string, CanonicalState> = {
  JOB_STATE_QUEUED: "pending",
  JOB_STATE_PENDING: "pending",
  JOB_STATE_RUNNING: "running",
  // Being updated, then running again.
  JOB_STATE_UPDATING: "running",
  // Being cancelled: not ended yet.
  JOB_STATE_CANCELLING: "running",
  // Paused: it can be resumed.
  JOB_STATE_PAUSED: "running",
};
const ENDED: Record<string, CanonicalState> = {
  JOB_STATE_SUCCEEDED: "succeeded",
  // Some instances failed: it ended, with output.
  JOB_STATE_PARTIALLY_SUCCEEDED: "succeeded",
  JOB_STATE_FAILED: "failed",
  JOB_STATE_CANCELLED: "cancelled",
  JOB_STATE_EXPIRED: "expired",
};

/** `state` undefined: left out (UNSPECIFIED). */
function job(id: string, state: string | undefined) {
  return fc
    .record({
      displayName: someText,
      createTime: rfc3339,
      startTime: optional(rfc3339),
      endTime: optional(rfc3339),
      updateTime: optional(rfc3339),
      completionStats: optional(
        fc.record({
          successfulCount: optional(count.map(String)),
          failedCount: optional(count.map(String)),
          incompleteCount: optional(count.map(String)),
        }),
      ),
      outputInfo: optional(fc.record({ gcsOutputDirectory: fc.constant("gs://out/prediction-1") })),
      error: optional(fc.record({ code: fc.integer({ min: 1, max: 16 }), message: someText })),
      labels: optional(
        fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_-]{0,10}$/), fc.stringMatching(/^[a-z0-9_-]{0,10}$/)),
      ),
    })
    .map((fields) =>
      objectOf({
        name: id,
        model: "publishers/google/models/gemini-2.0-flash-001",
        ...(state === undefined ? {} : { state }),
        ...fields,
      }),
    );
}

const drawn = (id: string, table: Record<string, CanonicalState>): fc.Arbitrary<DrawnAnswer> =>
  statusFrom(table).chain(({ status, expected }) => job(id, status).map((body) => ({ body, expected })));

/** Batch prediction job answers (polls; Vertex AI sends no webhooks). */
export const vertexJobs: AnswerSource = {
  open: (id) =>
    fc.oneof(
      drawn(id, OPEN),
      job(id, undefined).map((body) => ({ body, expected: null })),
      fc
        .oneof(
          fc.constant("JOB_STATE_UNSPECIFIED"),
          unknownStatus([...Object.keys(OPEN), ...Object.keys(ENDED)]),
        )
        .chain((state) => job(id, state).map((body) => ({ body, expected: null }))),
    ),
  ended: (id) => drawn(id, ENDED),
};
