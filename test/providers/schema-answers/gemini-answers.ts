import fc from "fast-check";
import type { CanonicalState } from "../../../src/core/states.js";
import { type AnswerSource, type DrawnAnswer, statusFrom } from "./drawn-answer.js";
import { count, objectOf, optional, rfc3339, someText, unknownStatus } from "./schema-times.js";

// google.longrunning.Operation in its JSON form (`name`, `metadata`, `done`, one of `error`
// (google.rpc.Status) or `response`), as the Gemini API answers `GET /v1beta/{name}`. A batch is an
// Operation whose `metadata` is the GenerateContentBatch with its `state` (BATCH_STATE_*; Vertex
// and the SDK say JOB_STATE_*). Timestamps are google.protobuf.Timestamp: RFC 3339, up to
// nanoseconds. google.rpc.Code 1 is CANCELLED.

const BATCH_OPEN: Record<string, CanonicalState> = { PENDING: "pending", RUNNING: "running" };
const BATCH_ENDED: Record<string, CanonicalState> = {
  SUCCEEDED: "succeeded",
  FAILED: "failed",
  CANCELLED: "cancelled",
  EXPIRED: "expired",
};
const PREFIXES = ["BATCH_STATE_", "JOB_STATE_"];
const prefix = fc.constantFrom(...PREFIXES);
const KNOWN = PREFIXES.flatMap((p) =>
  [...Object.keys(BATCH_OPEN), ...Object.keys(BATCH_ENDED)].map((s) => p + s),
);

const rpcStatus = (code: fc.Arbitrary<number>) =>
  fc.record({ code, message: someText, details: optional(fc.constant([])) });

/** `state` undefined: left out, as proto3 JSON leaves out an enum at its default (UNSPECIFIED). */
function batchOperation(id: string, state: string | undefined, done: boolean) {
  return fc
    .record({
      createTime: optional(rfc3339),
      updateTime: optional(rfc3339),
      endTime: optional(rfc3339),
      batchStats: optional(
        fc.record({ requestCount: count.map(String), successfulRequestCount: optional(count.map(String)) }),
      ),
      done: done ? fc.constant(true) : optional(fc.constant(false)),
    })
    .map(({ done: doneField, ...metadata }) =>
      objectOf({
        name: id,
        metadata: objectOf({
          "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
          name: id,
          ...(state === undefined ? {} : { state }),
          ...metadata,
        }),
        done: doneField,
      }),
    );
}

const answerOf =
  (expected: CanonicalState | null) =>
  (body: Record<string, unknown>): DrawnAnswer => ({
    body,
    expected,
  });

/** `GET /v1beta/batches/{id}` answers. */
export const geminiBatches: AnswerSource = {
  open: (id) =>
    fc.oneof(
      fc
        .tuple(prefix, statusFrom(BATCH_OPEN))
        .chain(([p, { status, expected }]) =>
          batchOperation(id, `${p}${status}`, false).map(answerOf(expected)),
        ),
      fc
        .tuple(prefix, fc.constant("UNSPECIFIED"))
        .chain(([p, status]) => batchOperation(id, `${p}${status}`, false).map(answerOf(null))),
      unknownStatus(KNOWN).chain((status) => batchOperation(id, status, false).map(answerOf(null))),
      // No state: still an Operation, and one not `done` is in progress (google.longrunning).
      batchOperation(id, undefined, false).map(answerOf("running")),
    ),
  ended: (id) =>
    fc
      .tuple(prefix, statusFrom(BATCH_ENDED))
      .chain(([p, { status, expected }]) =>
        batchOperation(id, `${p}${status}`, true).map(answerOf(expected)),
      ),
};

const operationMetadata = optional(
  fc.record({ "@type": fc.constant("type.googleapis.com/google.ai.generativelanguage.v1beta.Metadata") }),
);

/** `GET /v1beta/{model}/operations/{id}` answers for a plain long-running operation (Veo video). */
export const geminiOperations: AnswerSource = {
  open: (id) =>
    fc
      .record({ metadata: operationMetadata, done: optional(fc.constant(false)) })
      .map((fields) => objectOf({ name: id, ...fields }))
      .map(answerOf("running")),
  ended: (id) =>
    fc.oneof(
      fc
        .record({
          metadata: operationMetadata,
          response: fc.record({
            "@type": fc.constant(
              "type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse",
            ),
            generateVideoResponse: fc.record({ generatedSamples: fc.constant([]) }),
          }),
        })
        .map((fields) => objectOf({ name: id, done: true, ...fields }))
        .map(answerOf("succeeded")),
      // Done with neither `response` nor `error`: a method that returns Empty (AIP-151) succeeded.
      fc
        .record({ metadata: operationMetadata })
        .map((fields) => objectOf({ name: id, done: true, ...fields }))
        .map(answerOf("succeeded")),
      // Any google.rpc.Code but OK (0); CANCELLED (1) is a cancellation, the rest failures.
      fc
        .record({ metadata: operationMetadata, error: rpcStatus(fc.integer({ min: 1, max: 16 })) })
        .map((fields) => objectOf({ name: id, done: true, ...fields }))
        .map((body): DrawnAnswer => {
          const cancelled = (body.error as { code: number }).code === 1;
          return { body, expected: cancelled ? "cancelled" : "failed" };
        }),
    ),
};
